//! What the order use cases need of storage: one transaction over pets and orders, and reads.

use async_trait::async_trait;
use petstore_domain::{KeyId, NewOrder, Order, OrderFilter, OrderId, Pet, PetId, VisibleOrders};

use super::errors::OrderError;
use crate::idempotency::{RecordPlan, Written};
use crate::storage::RepositoryError;

/// One transaction over pets and orders, as [`OrderRepository::in_transaction`] hands it to a
/// use case. Blocking: the adapter runs the work on a thread that may block. What is read
/// `for_update` stays locked until the transaction ends, so two transactions on the same pet
/// or order take turns.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait StoreTransaction {
    /// The live pet `id` (none once removed), locked.
    fn pet_for_update(&mut self, id: PetId) -> Result<Option<Pet>, RepositoryError>;
    fn order_for_update(&mut self, id: OrderId) -> Result<Option<Order>, RepositoryError>;
    /// Stores `pet`'s status and version (what an order changes of a pet).
    fn save_pet(&mut self, pet: &Pet) -> Result<(), RepositoryError>;
    /// How many open (`placed`) orders the key `placed_by` has. Counted for update: until this
    /// transaction ends, another one counting the same key's orders waits, so that two orders
    /// placed by one key at once take turns and the second sees the first (the bound on open
    /// orders holds under concurrency).
    fn open_orders_for_update(&mut self, placed_by: &KeyId) -> Result<u64, RepositoryError>;
    /// Stores `order` as placed by the key `placed_by`.
    fn insert_order(
        &mut self,
        order: NewOrder,
        placed_by: &KeyId,
    ) -> Result<Order, RepositoryError>;
    /// Stores `order`'s status and ship date.
    fn save_order(&mut self, order: &Order) -> Result<(), RepositoryError>;
}

/// A use case's work inside one transaction. It may run more than once (a transaction that
/// fails to serialize is tried again), so it acts only through the transaction it is given.
pub type OrderWork =
    Box<dyn Fn(&mut dyn StoreTransaction) -> Result<Order, OrderError> + Send + Sync>;

/// Where orders are kept, with the pets they move.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OrderRepository: Send + Sync + 'static {
    /// Runs `work` in one transaction over pets and orders: everything it did is committed
    /// when it returns `Ok`, nothing when it returns `Err` (which is passed on as it is). With
    /// a `plan`, the record it makes of the order `work` returns is stored in the same
    /// transaction; when a live record for the plan's key is stored already, nothing is
    /// committed and that record is returned, also in place of the work's own refusal (the
    /// retry of a placed order finds its pet taken by that very order).
    async fn in_transaction(
        &self,
        work: OrderWork,
        plan: Option<RecordPlan<Order>>,
    ) -> Result<Written<Order>, OrderError>;

    /// The order with this id, if there is one.
    async fn find(&self, id: OrderId) -> Result<Option<Order>, RepositoryError>;

    /// Orders of `visible` matching `filter` with an id greater than `after`, ascending, at
    /// most `max`. Whose orders is part of the query, not a filter of its rows afterwards, so
    /// that a page is full whenever more follow.
    async fn list(
        &self,
        visible: VisibleOrders,
        filter: OrderFilter,
        after: Option<OrderId>,
        max: usize,
    ) -> Result<Vec<Order>, RepositoryError>;
}
