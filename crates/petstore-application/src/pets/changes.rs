//! Changing and removing a pet: the part of its write transaction the use cases decide (what to
//! write, given the pet as stored and locked, and the order holding it), the client's condition
//! on its version, and why a change is refused.

use petstore_domain::{OrderId, Pet, PetChangeError, PetId, PetRemovalError, PetVersion};

use crate::storage::RepositoryError;

/// Which versions of the pet a client's change is based on (HTTP's `If-Match`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionCondition {
    /// Whatever version the pet has now (`*`): the pet must exist, nothing more.
    Any,
    /// One of these versions.
    OneOf(Vec<PetVersion>),
}

impl VersionCondition {
    /// Whether a pet at `version` meets the condition.
    pub fn holds_for(&self, version: PetVersion) -> bool {
        match self {
            Self::Any => true,
            Self::OneOf(versions) => versions.contains(&version),
        }
    }
}

/// What a change of a pet writes, as its use case decided under the pet's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PetWrite {
    /// Nothing changed (every field asked for was as it is): nothing is written and the version
    /// stays.
    Unchanged(Pet),
    /// The pet as it is now, its version moved on.
    Changed(Pet),
    /// The pet is removed at this time (seconds since the epoch), in its last state.
    Removed(Pet, i64),
}

impl PetWrite {
    /// The pet as the write leaves it.
    pub fn pet(&self) -> &Pet {
        match self {
            Self::Unchanged(pet) | Self::Changed(pet) | Self::Removed(pet, _) => pet,
        }
    }
}

/// A use case's part of a pet's write transaction: given the live pet, locked until the
/// transaction ends, and the order holding it (placed or approved), if any, what to write. It
/// may run more than once (a transaction that fails to serialize is tried again).
pub type PetWork =
    Box<dyn Fn(Pet, Option<OrderId>) -> Result<PetWrite, PetWriteError> + Send + Sync>;

/// Why a change or removal of a pet was refused; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum PetWriteError {
    /// No live pet has this id (never created, or removed).
    #[error("no pet has the id {0}")]
    NotFound(PetId),
    /// The client's change is based on another version than the pet's current one.
    #[error("the pet has changed: it is at version {current} now")]
    Stale { current: PetVersion },
    #[error(transparent)]
    Change(#[from] PetChangeError),
    #[error(transparent)]
    Removal(#[from] PetRemovalError),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// Refuses `pet` unless it meets `condition` (none given: any version does).
pub(super) fn check_version(
    condition: Option<&VersionCondition>,
    pet: &Pet,
) -> Result<(), PetWriteError> {
    match condition {
        Some(condition) if !condition.holds_for(pet.version()) => Err(PetWriteError::Stale {
            current: pet.version(),
        }),
        _ => Ok(()),
    }
}
