//! Why an order use case failed.

use petstore_domain::{KeyScope, OrderConflict, OrderId, PetId, TooManyOpenOrders};

use crate::storage::RepositoryError;

/// Why an order use case failed; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("no pet has the id {0}")]
    PetNotFound(PetId),
    /// Also the answer for an order the caller may not see: another key's, or one placed
    /// before orders had owners (for all but the staff), so that ids tell nothing of others'
    /// orders.
    #[error("no order has the id {0}")]
    NotFound(OrderId),
    /// The caller's scope does not allow this (approving and delivering are the staff's).
    #[error("this API key may not do this: it needs the `{needed}` scope")]
    Forbidden { needed: KeyScope },
    #[error(transparent)]
    Conflict(#[from] OrderConflict),
    #[error(transparent)]
    TooManyOpenOrders(#[from] TooManyOpenOrders),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}
