//! `InMemoryInventoryRepository`: the pets of a `memory:` store counted by status, under the
//! store's one lock. Removed pets are kept apart from the live ones, so they are never counted.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use petstore_application::{InventoryRepository, RepositoryError};
use petstore_domain::Inventory;

use super::{InMemoryPetRepository, State};

/// Counts the pets of one in-memory store.
#[derive(Debug)]
pub struct InMemoryInventoryRepository {
    state: Arc<Mutex<State>>,
}

impl InMemoryInventoryRepository {
    /// Counts `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }
}

#[async_trait]
impl InventoryRepository for InMemoryInventoryRepository {
    async fn count_by_status(&self) -> Result<Inventory, RepositoryError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(Inventory::from_counts(
            state.pets.values().map(|pet| (pet.status(), 1)),
        ))
    }
}
