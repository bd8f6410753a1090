//! The pet use cases: create, list, get, change and remove pets. Each says exactly what can go
//! wrong with it: an error enum of its own where the operation has failures of its own (getPet:
//! not found, gone; a change: not found, stale, refused by the pet's rules), else storage's
//! `RepositoryError` as it is.

use std::sync::Arc;
use std::time::SystemTime;

use petstore_domain::{NamePosition, NewPet, Pet, PetChange, PetId, PetIds, PetListQuery};

mod changes;
pub mod deprecation;
mod ports;

pub use changes::{PetWork, PetWrite, PetWriteError, VersionCondition};

#[cfg(any(test, feature = "mocks"))]
pub use ports::MockPetRepository;
pub use ports::PetRepository;

use crate::clock::{unix_seconds, Clock};
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
/// page holds the last matching pet. A page in name order also has `next_after_name`, the
/// folded name of the pet `next_after` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetPage {
    pub pets: Vec<Pet>,
    pub next_after: Option<PetId>,
    pub next_after_name: Option<String>,
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

    /// `updatePet`: applies `change` to the pet `id`, under its lock, if it is at a version
    /// `condition` accepts (none given: any). Its status moves only along the life cycle and
    /// only while no order holds it; a change that changes nothing writes nothing. With an
    /// idempotency key's `plan`, as [`create_pet`](Self::create_pet).
    pub async fn update_pet(
        &self,
        id: PetId,
        change: PetChange,
        condition: Option<VersionCondition>,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, PetWriteError> {
        let work: PetWork = Box::new(move |mut pet, holding_order| {
            changes::check_version(condition.as_ref(), &pet)?;
            Ok(if pet.apply_change(&change, holding_order)? {
                PetWrite::Changed(pet)
            } else {
                PetWrite::Unchanged(pet)
            })
        });
        self.repository.change(id, work, plan).await
    }

    /// `deletePet`: removes the pet `id`, under its lock, if it is at a version `condition`
    /// accepts and no order holds it; the pet as it was last.
    pub async fn remove_pet(
        &self,
        id: PetId,
        condition: Option<VersionCondition>,
    ) -> Result<Pet, PetWriteError> {
        let now = unix_seconds(self.clock.now());
        let work: PetWork = Box::new(move |mut pet, holding_order| {
            changes::check_version(condition.as_ref(), &pet)?;
            pet.remove(holding_order)?;
            Ok(PetWrite::Removed(pet, now))
        });
        match self.repository.change(id, work, None).await? {
            Written::Done(pet, _) => Ok(pet),
            Written::Earlier(_) => Err(PetWriteError::Repository(RepositoryError::Unexpected(
                "storage answered a removal from an idempotency record".into(),
            ))),
        }
    }

    /// `listPets`: one page of pets in ascending id order, or in name order for a search by
    /// name without a tag.
    pub async fn list_pets(&self, query: PetListQuery) -> Result<PetPage, RepositoryError> {
        let limit = usize::from(query.limit.get());
        // One row more than the page tells whether another page exists without a second query.
        if query.search.in_name_order() {
            let after = query.after.map(|id| NamePosition {
                folded_name: query.after_name.unwrap_or_default(),
                id,
            });
            let mut pets = self
                .repository
                .list_by_name(query.status, &query.search, after, limit + 1)
                .await?;
            let next = cut_page(&mut pets, limit, NamePosition::of);
            return Ok(PetPage {
                pets,
                next_after: next.as_ref().map(|position| position.id),
                next_after_name: next.map(|position| position.folded_name),
            });
        }
        let mut pets = self
            .repository
            .list(query.status, &query.search, query.after, limit + 1)
            .await?;
        let next_after = cut_page(&mut pets, limit, |pet| pet.id());
        Ok(PetPage {
            pets,
            next_after,
            next_after_name: None,
        })
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
            .filter(|pet| query.search.matches(pet))
            .filter(|pet| query.after.is_none_or(|after| pet.id() > after))
            .take(limit + 1)
            .collect();
        let next_after = cut_page(&mut pets, limit, |pet| pet.id());
        Ok(PetPage {
            pets,
            next_after,
            next_after_name: None,
        })
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
