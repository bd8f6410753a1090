//! The administrators' side: drafting, recording, revoking and listing keys (`petstore keys`
//! and the start-up key), and the count of keys issued before tokens were bound.

use std::sync::PoisonError;
use std::time::Duration;

use petstore_domain::{ApiKey, KeyId, KeyName, KeyScope};

use super::{EntryState, KeyDirectory, Revocation};
use crate::clock::unix_seconds;
use crate::storage::RepositoryError;

impl KeyDirectory {
    /// The record of a new key for `name`, issued now, not yet recorded nor bound to a token:
    /// the issuer signs its token from it, binds the digest and hands it to
    /// [`record`](Self::record). `lifetime` `None` means it never expires.
    pub fn draft(
        &self,
        id: KeyId,
        name: KeyName,
        scope: KeyScope,
        lifetime: Option<Duration>,
    ) -> ApiKey {
        let created_at = unix_seconds(self.inner.clock.now());
        let expires_at = lifetime.map(|lifetime| {
            let seconds = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
            created_at.saturating_add(seconds)
        });
        ApiKey {
            id,
            name,
            scope,
            token_digest: None,
            created_at,
            expires_at,
            revoked_at: None,
            last_used_at: None,
        }
    }

    /// Records a newly issued key and makes it usable here at once (other instances see it at
    /// their next refresh, or look it up on its first request).
    pub fn record(&self, key: &ApiKey) -> Result<(), RepositoryError> {
        self.inner.repository.insert(key)?;
        self.refresh()?;
        Ok(())
    }

    /// Revokes the key `id` (idempotent) and stops accepting it here at once.
    pub fn revoke(&self, id: &KeyId) -> Result<Revocation, RepositoryError> {
        let now = unix_seconds(self.inner.clock.now());
        let revocation = self.inner.repository.revoke(id, now)?;
        self.refresh()?;
        Ok(revocation)
    }

    /// Every key in the registry, oldest first (read from the registry, not the directory).
    pub fn list(&self) -> Result<Vec<ApiKey>, RepositoryError> {
        self.inner.repository.list()
    }

    /// How many usable keys (not revoked, not expired) were recorded before tokens were bound:
    /// any token signed with the secret and their id passes for them until they are rotated.
    pub fn unbound_usable(&self) -> usize {
        let now = unix_seconds(self.inner.clock.now());
        self.inner
            .entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|entry| {
                entry.token_digest.is_none()
                    && match entry.state {
                        EntryState::Revoked => false,
                        EntryState::ExpiresAt(expires) => expires.is_none_or(|at| now < at),
                    }
            })
            .count()
    }
}
