//! What idempotent retries need of storage beyond the writes themselves (which store their
//! record in their own transaction: `PetRepository::create_recorded`,
//! `OrderRepository::in_transaction_recorded`).

use async_trait::async_trait;
use petstore_domain::IdempotencyKey;

use super::record::{IdempotencyRecord, KeyOwner};
use crate::storage::RepositoryError;

#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// The record for `owner`'s `key`, if one is stored.
    async fn find(
        &self,
        owner: &KeyOwner,
        key: &IdempotencyKey,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError>;

    /// Stores the record of a request that changed nothing (a refusal such as a 404 or 409). A
    /// record stored first for the same key wins and is returned.
    async fn insert(
        &self,
        record: IdempotencyRecord,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError>;

    /// Removes `owner`'s record for `key` if it was stored before `cutoff` (seconds since the
    /// epoch): an expired record the purge has not reached yet.
    async fn remove_expired(
        &self,
        owner: &KeyOwner,
        key: &IdempotencyKey,
        cutoff: i64,
    ) -> Result<(), RepositoryError>;

    /// Removes up to `max` records stored before `cutoff`; how many it removed.
    async fn purge(&self, cutoff: i64, max: usize) -> Result<usize, RepositoryError>;
}
