//! The category use cases: list, get, create, rename and remove categories. A category is a
//! name for a `categoryId`; pets never depend on one (a pet's `categoryId` is any id), so
//! removing a category changes no pet.

use std::sync::Arc;

use petstore_domain::{Category, CategoryId, CategoryName, PageLimit};

mod ports;

pub use ports::CategoryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockCategoryRepository;

use crate::clock::{unix_seconds, Clock};
use crate::idempotency::{RecordPlan, Written};
use crate::paging::cut_page;
use crate::storage::RepositoryError;

/// Why a category use case failed; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum CategoryError {
    #[error("no category has the id {0}")]
    NotFound(CategoryId),
    #[error("a category named `{0}` exists already (names are unique regardless of case)")]
    NameTaken(CategoryName),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// One page of categories; `next_after` is where the following page starts, `None` on the
/// last page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryPage {
    pub categories: Vec<Category>,
    pub next_after: Option<CategoryId>,
}

/// The category use cases over whichever repository and clock the composition root chose.
#[derive(Clone)]
pub struct CategoryService {
    repository: Arc<dyn CategoryRepository>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for CategoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CategoryService").finish_non_exhaustive()
    }
}

impl CategoryService {
    pub fn new(repository: Arc<dyn CategoryRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { repository, clock }
    }

    /// `listCategories`: one page of the live categories in ascending id order, after `after`.
    pub async fn list_categories(
        &self,
        after: Option<CategoryId>,
        limit: PageLimit,
    ) -> Result<CategoryPage, RepositoryError> {
        let limit = usize::from(limit.get());
        // One row more than the page tells whether another page exists without a second query.
        let mut categories = self.repository.list(after, limit + 1).await?;
        let next_after = cut_page(&mut categories, limit, Category::id);
        Ok(CategoryPage {
            categories,
            next_after,
        })
    }

    /// `getCategory`: the live category `id`.
    pub async fn get_category(&self, id: CategoryId) -> Result<Category, CategoryError> {
        self.repository
            .find(id)
            .await?
            .ok_or(CategoryError::NotFound(id))
    }

    /// `createCategory`: stores a category named `name`, unless a live one has the name
    /// (regardless of case). With an idempotency key's `plan`, its record stored together with
    /// it, or the record stored first for the key.
    pub async fn create_category(
        &self,
        name: CategoryName,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.repository.create(name, plan).await
    }

    /// `updateCategory`: renames the category `id` to `name` (`None`: leaves it as it is),
    /// unless another live category has the name. With a `plan`, as
    /// [`create_category`](Self::create_category).
    pub async fn update_category(
        &self,
        id: CategoryId,
        name: Option<CategoryName>,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.repository.rename(id, name, plan).await
    }

    /// `deleteCategory`: removes the category `id` (its name is free again); its pets keep
    /// their `categoryId`.
    pub async fn remove_category(&self, id: CategoryId) -> Result<Category, CategoryError> {
        let now = unix_seconds(self.clock.now());
        self.repository.remove(id, now).await
    }
}

#[cfg(test)]
mod tests;
