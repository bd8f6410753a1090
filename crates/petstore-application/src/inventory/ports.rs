//! What the inventory use case needs of storage.

use async_trait::async_trait;
use petstore_domain::Inventory;

use crate::storage::RepositoryError;

/// Where the pets are counted.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait InventoryRepository: Send + Sync + 'static {
    /// How many live pets each status has, counted now: a removed pet is in none. Costs a read
    /// of every live pet's status, so callers keep the answer a while
    /// ([`InventoryService`](super::InventoryService)).
    async fn count_by_status(&self) -> Result<Inventory, RepositoryError>;
}
