//! Why an order use case failed.

use petstore_domain::{OrderConflict, OrderId, PetId};

use crate::storage::RepositoryError;

/// Why an order use case failed; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("no pet has the id {0}")]
    PetNotFound(PetId),
    #[error("no order has the id {0}")]
    NotFound(OrderId),
    #[error(transparent)]
    Conflict(#[from] OrderConflict),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}
