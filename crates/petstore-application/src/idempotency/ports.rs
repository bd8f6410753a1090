//! What idempotent retries need of storage beyond the writes themselves (which store their
//! record in their own transaction, given a `RecordPlan`). Every way of storing a record follows one rule:
//! a record stored first for the key answers for it while it is within its retention; an
//! expired one is replaced.

use async_trait::async_trait;
use petstore_domain::{IdempotencyKey, KeyId};

use super::record::IdempotencyRecord;
use crate::storage::RepositoryError;

#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// The record for `owner`'s `key`, if one is stored.
    async fn find(
        &self,
        owner: &KeyId,
        key: &IdempotencyKey,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError>;

    /// Stores the record of a request that changed nothing (a refusal of the request itself),
    /// replacing one stored before `expired_before`. A record stored first for the same key and
    /// not expired wins and is returned.
    async fn insert(
        &self,
        record: IdempotencyRecord,
        expired_before: i64,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError>;

    /// Removes up to `max` records stored before `cutoff`; how many it removed.
    async fn purge(&self, cutoff: i64, max: usize) -> Result<usize, RepositoryError>;
}
