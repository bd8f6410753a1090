//! What the category use cases need of storage.

use async_trait::async_trait;
use petstore_domain::{Category, CategoryId, CategoryName};

use super::CategoryError;
use crate::idempotency::{RecordPlan, Written};
use crate::storage::RepositoryError;

/// Where categories are kept. Ids are unique and increasing and never handed out again; names
/// are unique among the live categories by their case fold ([`CategoryName::folded`]), under
/// concurrency too. A removed category stays stored as a tombstone that no read sees, and its
/// name is free again.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CategoryRepository: Send + Sync + 'static {
    /// Stores a new category named `name` with a new id; `NameTaken` when a live category has
    /// the name. With a `plan`, stores in the same transaction the record the plan makes of it,
    /// or, when a live record for the plan's key is stored already, stores nothing and returns
    /// that record (also in place of `NameTaken`: a retry finds its own name taken).
    async fn create(
        &self,
        name: CategoryName,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError>;

    /// Renames the live category `id` to `name` (`None`: changes nothing, and answers the
    /// category as it is); `NotFound` when no live category has the id, `NameTaken` when
    /// another live one has the name. With a `plan`, as [`create`](Self::create).
    async fn rename(
        &self,
        id: CategoryId,
        name: Option<CategoryName>,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError>;

    /// Removes the live category `id`, recording when (`removed_at`, seconds since the epoch);
    /// the category as it was. `NotFound` when no live category has the id.
    async fn remove(&self, id: CategoryId, removed_at: i64) -> Result<Category, CategoryError>;

    /// The live category with this id, if there is one.
    async fn find(&self, id: CategoryId) -> Result<Option<Category>, RepositoryError>;

    /// Live categories with an id greater than `after` (from the first when `None`), in
    /// ascending id order, at most `max` of them.
    async fn list(
        &self,
        after: Option<CategoryId>,
        max: usize,
    ) -> Result<Vec<Category>, RepositoryError>;
}
