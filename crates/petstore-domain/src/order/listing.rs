//! What a client may ask of the order listing: which orders (status, pet), how many per page,
//! and where the previous page ended. Keyset paging on the id, as for pets.

use crate::{OrderId, OrderStatus, PageLimit, PetId};

/// Which orders a listing wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderFilter {
    pub status: Option<OrderStatus>,
    pub pet_id: Option<PetId>,
}

/// One page of the order listing: orders matching `filter` with an id greater than `after`
/// (from the first when `None`), ascending, at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderListQuery {
    pub filter: OrderFilter,
    pub after: Option<OrderId>,
    pub limit: PageLimit,
}
