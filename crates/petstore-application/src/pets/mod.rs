//! The pet use cases: create, list and get pets. Each says exactly what can go wrong with it: an
//! error enum of its own where the operation has failures of its own (getPet: not found, gone),
//! else storage's `RepositoryError` as it is.

use std::sync::Arc;
use std::time::SystemTime;

use petstore_domain::{NewPet, Pet, PetId, PetIds, PetListQuery};

pub mod deprecation;
mod ports;

#[cfg(any(test, feature = "mocks"))]
pub use ports::MockPetRepository;
pub use ports::PetRepository;

use crate::clock::Clock;
use crate::idempotency::{RecordPlan, Written};
use crate::paging::cut_page;
use crate::storage::RepositoryError;
use deprecation::get_pet_sunset;

#[derive(Debug, thiserror::Error)]
pub enum GetPetError {
    #[error("no pet has the id {0}")]
    NotFound(PetId),
    #[error("this operation was removed at its sunset")]
    Gone { sunset: SystemTime },
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// One page of the listing. `next_after` is where the following page starts; `None` when this
/// page holds the last matching pet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetPage {
    pub pets: Vec<Pet>,
    pub next_after: Option<PetId>,
}

/// The pet use cases over whichever repository and clock the composition root chose.
#[derive(Clone)]
pub struct PetService {
    repository: Arc<dyn PetRepository>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for PetService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PetService").finish_non_exhaustive()
    }
}

impl PetService {
    pub fn new(repository: Arc<dyn PetRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { repository, clock }
    }

    /// `createPet`: stores the pet and returns it with its id; with an idempotency key's
    /// `plan`, its record stored together with it, or the record stored first for the key.
    pub async fn create_pet(
        &self,
        new_pet: NewPet,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, RepositoryError> {
        self.repository.create(new_pet, plan).await
    }

    /// `listPets`: one page of pets in ascending id order.
    pub async fn list_pets(&self, query: PetListQuery) -> Result<PetPage, RepositoryError> {
        let limit = usize::from(query.limit.get());
        // One row more than the page tells whether another page exists without a second query.
        let mut pets = self
            .repository
            .list(query.status, query.after, limit + 1)
            .await?;
        let next_after = cut_page(&mut pets, limit, |pet| pet.id());
        Ok(PetPage { pets, next_after })
    }

    /// `listPets?id=...`: one page of the pets with these ids (those that exist and match
    /// `query`'s status, after its cursor), like any listing. getPet's replacement. At most 100
    /// ids, so they are read at once and paged here.
    pub async fn list_pets_by_id(
        &self,
        query: PetListQuery,
        ids: &PetIds,
    ) -> Result<PetPage, RepositoryError> {
        let limit = usize::from(query.limit.get());
        let mut pets: Vec<Pet> = self
            .repository
            .find_many(ids.as_slice())
            .await?
            .into_iter()
            .filter(|pet| query.status.is_none_or(|status| pet.status() == status))
            .filter(|pet| query.after.is_none_or(|after| pet.id() > after))
            .take(limit + 1)
            .collect();
        let next_after = cut_page(&mut pets, limit, |pet| pet.id());
        Ok(PetPage { pets, next_after })
    }

    /// `getPet` (deprecated): the pet with this id, until the operation's sunset.
    pub async fn get_pet(&self, id: PetId) -> Result<Pet, GetPetError> {
        let sunset = get_pet_sunset();
        if self.clock.now() >= sunset {
            return Err(GetPetError::Gone { sunset });
        }
        self.repository
            .find(id)
            .await?
            .ok_or(GetPetError::NotFound(id))
    }

    /// Whether storage answers (readiness).
    pub async fn check_storage(&self) -> Result<(), RepositoryError> {
        self.repository.ping().await
    }
}

#[cfg(test)]
mod tests;
