//! What the pet use cases need of storage.

use async_trait::async_trait;
use petstore_domain::{NamePosition, NewPet, Pet, PetId, PetSearch, PetStatus};

use super::changes::{PetWork, PetWriteError};
use crate::idempotency::{RecordPlan, Written};
use crate::storage::RepositoryError;

/// Where pets are kept. Implementations must assign ids that are unique and increasing, and must
/// only return from `create` once the pet is durably stored.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PetRepository: Send + Sync + 'static {
    /// Stores a new pet and returns it with its assigned id; with a `plan`, stores in the same
    /// transaction the record the plan makes of it, or, when a live record for the plan's key
    /// is stored already, stores nothing and returns that record.
    async fn create(
        &self,
        new_pet: NewPet,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, RepositoryError>;

    /// Runs `work` in one write transaction on the live pet `id`, read locked (until the
    /// transaction ends, another change of the pet or an order moving it waits) together with
    /// the order that holds it (placed or approved), and stores what `work` decides: the
    /// changed pet, or its removal. `NotFound` when no live pet has the id; `work`'s refusal is
    /// passed on as it is, and nothing is stored. With a `plan`, as [`create`](Self::create):
    /// the record stored with the write, or the live record stored first for the key answers
    /// instead (also in place of `work`'s refusal).
    async fn change(
        &self,
        id: PetId,
        work: PetWork,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, PetWriteError>;

    /// Pets with an id greater than `after` (from the first when `None`) and, when given, the
    /// status `status`, matching `search`, in ascending id order, at most `max` of them.
    async fn list(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError>;

    /// Pets after `after` (from the first when `None`) in name order (folded name, then id),
    /// with `status` when given and matching `search`, whose `name` is given: at most `max` of
    /// them. The listing of a search by name without a tag ([`PetSearch::in_name_order`]).
    async fn list_by_name(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<NamePosition>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError>;

    /// The pet with this id, if there is one (and it was not removed; so for every read).
    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError>;

    /// The pets with these ids (those that exist), in ascending id order.
    async fn find_many(&self, ids: &[PetId]) -> Result<Vec<Pet>, RepositoryError>;

    /// Succeeds when storage answers; used by readiness checks.
    async fn ping(&self) -> Result<(), RepositoryError>;
}
