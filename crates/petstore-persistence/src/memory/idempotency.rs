//! `InMemoryIdempotencyStore`: the idempotency port on the `memory:` store's state, where the
//! pets' and orders' writes store their records under the same lock.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use petstore_application::{IdempotencyRecord, IdempotencyStore, RepositoryError};
use petstore_domain::{IdempotencyKey, KeyId};

use super::{InMemoryPetRepository, State};

#[derive(Debug)]
pub struct InMemoryIdempotencyStore {
    state: Arc<Mutex<State>>,
}

impl InMemoryIdempotencyStore {
    /// The records of `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl IdempotencyStore for InMemoryIdempotencyStore {
    async fn find(
        &self,
        owner: &KeyId,
        key: &IdempotencyKey,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError> {
        Ok(self.state().records.get(owner, key).cloned())
    }

    async fn insert(
        &self,
        record: IdempotencyRecord,
        expired_before: i64,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError> {
        Ok(self.state().insert_record_if_absent(record, expired_before))
    }

    async fn purge(&self, cutoff: i64, max: usize) -> Result<usize, RepositoryError> {
        Ok(self.state().records.purge(cutoff, max))
    }
}
