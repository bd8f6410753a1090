//! `InMemoryPetRepository`: the repository port backed by a map in the process (`memory:`).
//! Same contract as the database adapters, minus durability: everything is gone on exit.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use petstore_application::{
    PetRepository, PetWork, PetWrite, PetWriteError, RecordPlan, RepositoryError, Written,
};
use petstore_domain::{
    EventSubject, EventType, NamePosition, NewPet, Order, Pet, PetId, PetSearch, PetStatus,
};

use super::State;

/// Pets in a `BTreeMap` keyed by id, so listing in id order is a range scan. The state is
/// shared with the [`InMemoryOrderRepository`](super::InMemoryOrderRepository) of the same
/// store, whose transactions change pets and orders under one lock.
#[derive(Debug, Default)]
pub struct InMemoryPetRepository {
    state: Arc<Mutex<State>>,
}

impl InMemoryPetRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// The state, for the order repository of the same store.
    pub(super) fn shared_state(&self) -> Arc<Mutex<State>> {
        Arc::clone(&self.state)
    }

    /// A new pet into `state`, with the next id.
    fn insert(state: &mut State, new_pet: NewPet) -> Result<Pet, RepositoryError> {
        let id = state.last_id.checked_add(1).ok_or_else(|| {
            RepositoryError::Unexpected("the in-memory store ran out of pet ids".into())
        })?;
        let pet = new_pet.into_pet(PetId::new(id));
        state.last_id = id;
        state.pets.insert(id, pet.clone());
        Ok(pet)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every critical section leaves the state consistent before anything can panic, so a
        // poisoned lock still guards valid data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl PetRepository for InMemoryPetRepository {
    async fn create(
        &self,
        new_pet: NewPet,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, RepositoryError> {
        self.state().write_recorded(plan, |state| {
            let pet = Self::insert(state, new_pet)?;
            state
                .events
                .record(EventType::PetCreated, EventSubject::Pet(pet.clone()))?;
            Ok(pet)
        })
    }

    async fn change(
        &self,
        id: PetId,
        work: PetWork,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, PetWriteError> {
        self.state().write_recorded(plan, |state| {
            let pet = state
                .pets
                .get(&id.get())
                .cloned()
                .ok_or(PetWriteError::NotFound(id))?;
            let holding = state
                .orders
                .values()
                .find(|order| order.pet_id() == id && order.status().holds_its_pet())
                .map(Order::id);
            match work(pet, holding)? {
                PetWrite::Unchanged(pet) => Ok(pet),
                PetWrite::Changed(pet) => {
                    state.pets.insert(id.get(), pet.clone());
                    state
                        .events
                        .record(EventType::PetUpdated, EventSubject::Pet(pet.clone()))?;
                    Ok(pet)
                }
                PetWrite::Removed(pet, at) => {
                    state.pets.remove(&id.get());
                    state.removed_pets.insert(id.get(), (pet.clone(), at));
                    state
                        .events
                        .record(EventType::PetRemoved, EventSubject::Pet(pet.clone()))?;
                    Ok(pet)
                }
            }
        })
    }

    async fn list(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        let state = self.state();
        let from = after.map_or(i64::MIN, |id| id.get().saturating_add(1));
        if after.is_some_and(|id| id.get() == i64::MAX) {
            return Ok(Vec::new());
        }
        // Sized up front: a filtered iterator promises no length, and growing the page one
        // doubling at a time would copy every pet in it again.
        let mut page = Vec::with_capacity(max.min(state.pets.len()));
        page.extend(
            state
                .pets
                .range(from..)
                .map(|(_, pet)| pet)
                .filter(|pet| status.is_none_or(|wanted| pet.status() == wanted))
                .filter(|pet| search.matches(pet))
                .take(max)
                .cloned(),
        );
        Ok(page)
    }

    async fn list_by_name(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<NamePosition>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        // The memory backend keeps no name index: the matches are found and sorted per page.
        let state = self.state();
        let mut matching: Vec<(NamePosition, &Pet)> = state
            .pets
            .values()
            .filter(|pet| status.is_none_or(|wanted| pet.status() == wanted))
            .filter(|pet| search.matches(pet))
            .map(|pet| (NamePosition::of(pet), pet))
            .filter(|(position, _)| after.as_ref().is_none_or(|after| position > after))
            .collect();
        matching.sort_unstable_by(|(left, _), (right, _)| left.cmp(right));
        Ok(matching
            .into_iter()
            .take(max)
            .map(|(_, pet)| pet.clone())
            .collect())
    }

    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        Ok(self.state().pets.get(&id.get()).cloned())
    }

    async fn find_many(&self, ids: &[PetId]) -> Result<Vec<Pet>, RepositoryError> {
        let state = self.state();
        let mut pets: Vec<Pet> = ids
            .iter()
            .filter_map(|id| state.pets.get(&id.get()).cloned())
            .collect();
        pets.sort_by_key(|pet| pet.id());
        pets.dedup_by_key(|pet| pet.id());
        Ok(pets)
    }

    async fn ping(&self) -> Result<(), RepositoryError> {
        Ok(())
    }
}
