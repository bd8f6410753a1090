//! What the key directory and the `petstore keys` commands need of the key registry.

use petstore_domain::{ApiKey, KeyId};

use crate::storage::RepositoryError;

/// Where issued API keys are recorded: the registry every instance reads.
///
/// Blocking, unlike [`PetRepository`]: it is called by the key directory's background thread
/// and by the `petstore keys` commands, never on a request's path.
///
/// Implementations give every insert and revocation a *revision* higher than every revision
/// already visible to a reader, so that [`changes_since`](Self::changes_since) with the last
/// revision seen never misses a change.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait KeyRegistry: Send + Sync + 'static {
    /// Records a newly issued key.
    fn insert(&self, key: &ApiKey) -> Result<(), RepositoryError>;

    /// Every key, oldest first.
    fn list(&self) -> Result<Vec<ApiKey>, RepositoryError>;

    /// Marks the key revoked at `at` (Unix seconds) unless it already is.
    fn revoke(&self, id: &KeyId, at: i64) -> Result<Revocation, RepositoryError>;

    /// The keys inserted or revoked after `revision`, and the revision that brings a reader up
    /// to date with them.
    fn changes_since(&self, revision: i64) -> Result<KeyChanges, RepositoryError>;

    /// Records that each key was last used at the given time (Unix seconds), unless a later use
    /// is recorded already.
    fn record_use(&self, uses: &[(KeyId, i64)]) -> Result<(), RepositoryError>;
}

/// What [`KeyRegistry::changes_since`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyChanges {
    pub keys: Vec<ApiKey>,
    pub revision: i64,
}

/// What [`KeyRegistry::revoke`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// The key is now revoked.
    Revoked(ApiKey),
    /// It was revoked before (at its `revoked_at`); nothing changed.
    AlreadyRevoked(ApiKey),
    /// No key has that id.
    NotFound,
}
