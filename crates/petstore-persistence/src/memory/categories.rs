//! `InMemoryCategoryRepository`: categories of a `memory:` store, under the store's one lock
//! with the idempotency records their writes store. The same contract as the SQL repository:
//! ids increasing and never handed out again, names unique among the live categories by their
//! case fold, a removed category kept apart (a tombstone no read sees) and its name free again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use petstore_application::{
    CategoryError, CategoryRepository, RecordPlan, RepositoryError, Written,
};
use petstore_domain::{Category, CategoryId, CategoryName, EventSubject, EventType};

use super::{InMemoryPetRepository, State};

/// What the store holds of categories: the live ones by id, the removed ones with when they
/// went (seconds since the epoch), and the last id handed out.
#[derive(Debug, Default)]
pub(super) struct Categories {
    live: BTreeMap<i64, Category>,
    removed: BTreeMap<i64, (Category, i64)>,
    last_id: i64,
}

impl Categories {
    /// Refuses `name` when a live category other than `except` has it, regardless of case.
    fn name_free(
        &self,
        name: &CategoryName,
        except: Option<CategoryId>,
    ) -> Result<(), CategoryError> {
        let taken = self
            .live
            .values()
            .any(|category| Some(category.id()) != except && category.name().same_as(name));
        if taken {
            return Err(CategoryError::NameTaken(name.clone()));
        }
        Ok(())
    }

    fn insert(&mut self, name: CategoryName) -> Result<Category, CategoryError> {
        self.name_free(&name, None)?;
        let id = CategoryId::parse(self.last_id + 1)
            .map_err(|error| RepositoryError::Unexpected(Box::new(error)))?;
        let category = Category::new(id, name);
        self.last_id = id.get();
        self.live.insert(id.get(), category.clone());
        Ok(category)
    }

    /// The category renamed, and whether its name changed.
    fn rename(
        &mut self,
        id: CategoryId,
        name: Option<CategoryName>,
    ) -> Result<(Category, bool), CategoryError> {
        let current = self
            .live
            .get(&id.get())
            .cloned()
            .ok_or(CategoryError::NotFound(id))?;
        let Some(name) = name else {
            return Ok((current, false));
        };
        self.name_free(&name, Some(id))?;
        let changed = current.name().as_str() != name.as_str();
        let renamed = current.renamed(name);
        self.live.insert(id.get(), renamed.clone());
        Ok((renamed, changed))
    }
}

/// Categories kept with the pets of one in-memory store.
#[derive(Debug)]
pub struct InMemoryCategoryRepository {
    state: Arc<Mutex<State>>,
}

impl InMemoryCategoryRepository {
    /// The categories of `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Carries out `write` on the categories with its record and, when it changed the
    /// category, the event `event_type`; a refusal is answered from a live record for the
    /// plan's key when there is one, as the SQL repository does.
    fn write(
        &self,
        plan: Option<RecordPlan<Category>>,
        event_type: EventType,
        write: impl FnOnce(&mut Categories) -> Result<(Category, bool), CategoryError>,
    ) -> Result<Written<Category>, CategoryError> {
        let mut state = self.state();
        state.write_recorded(plan, |state| {
            let (category, changed) = write(&mut state.categories)?;
            if changed {
                state
                    .events
                    .record(event_type, EventSubject::Category(category.clone()))?;
            }
            Ok(category)
        })
    }
}

#[async_trait]
impl CategoryRepository for InMemoryCategoryRepository {
    async fn create(
        &self,
        name: CategoryName,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.write(plan, EventType::CategoryCreated, |categories| {
            categories.insert(name).map(|category| (category, true))
        })
    }

    async fn rename(
        &self,
        id: CategoryId,
        name: Option<CategoryName>,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.write(plan, EventType::CategoryUpdated, |categories| {
            categories.rename(id, name)
        })
    }

    async fn remove(&self, id: CategoryId, removed_at: i64) -> Result<Category, CategoryError> {
        let mut state = self.state();
        let categories = &mut state.categories;
        let category = categories
            .live
            .remove(&id.get())
            .ok_or(CategoryError::NotFound(id))?;
        categories
            .removed
            .insert(id.get(), (category.clone(), removed_at));
        state.events.record(
            EventType::CategoryRemoved,
            EventSubject::Category(category.clone()),
        )?;
        Ok(category)
    }

    async fn find(&self, id: CategoryId) -> Result<Option<Category>, RepositoryError> {
        Ok(self.state().categories.live.get(&id.get()).cloned())
    }

    async fn list(
        &self,
        after: Option<CategoryId>,
        max: usize,
    ) -> Result<Vec<Category>, RepositoryError> {
        let after = after.map_or(0, CategoryId::get);
        Ok(self
            .state()
            .categories
            .live
            .range(after.saturating_add(1)..)
            .take(max)
            .map(|(_, category)| category.clone())
            .collect())
    }
}
