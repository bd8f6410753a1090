//! `InMemoryKeyRegistry`: the key registry of a `memory:` server, kept in the process. No other
//! process can reach it, so `petstore keys ...` commands cannot either; `serve` issues a key
//! itself at start-up instead.

use std::sync::{Mutex, PoisonError};

use petstore_application::{KeyChanges, KeyRegistry, RepositoryError, Revocation};
use petstore_domain::{ApiKey, KeyId};

/// Keys with the revision each last changed at, in insertion order.
#[derive(Debug, Default)]
pub struct InMemoryKeyRegistry {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    keys: Vec<(ApiKey, i64)>,
    revision: i64,
}

impl InMemoryKeyRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl KeyRegistry for InMemoryKeyRegistry {
    fn insert(&self, key: &ApiKey) -> Result<(), RepositoryError> {
        let mut state = self.state();
        if state.keys.iter().any(|(known, _)| known.id == key.id) {
            return Err(RepositoryError::Unexpected(
                format!("a key with the id {} exists already", key.id).into(),
            ));
        }
        state.revision += 1;
        let revision = state.revision;
        state.keys.push((key.clone(), revision));
        Ok(())
    }

    fn list(&self) -> Result<Vec<ApiKey>, RepositoryError> {
        Ok(self
            .state()
            .keys
            .iter()
            .map(|(key, _)| key.clone())
            .collect())
    }

    fn revoke(&self, id: &KeyId, at: i64) -> Result<Revocation, RepositoryError> {
        let mut state = self.state();
        let next = state.revision + 1;
        let Some((key, revision)) = state.keys.iter_mut().find(|(key, _)| key.id == *id) else {
            return Ok(Revocation::NotFound);
        };
        if key.revoked_at.is_some() {
            return Ok(Revocation::AlreadyRevoked(key.clone()));
        }
        key.revoked_at = Some(at);
        *revision = next;
        let revoked = key.clone();
        state.revision = next;
        Ok(Revocation::Revoked(revoked))
    }

    fn changes_since(&self, revision: i64) -> Result<KeyChanges, RepositoryError> {
        let state = self.state();
        let mut changed: Vec<_> = state
            .keys
            .iter()
            .filter(|(_, changed_at)| *changed_at > revision)
            .collect();
        changed.sort_by_key(|(_, changed_at)| *changed_at);
        Ok(KeyChanges {
            keys: changed.into_iter().map(|(key, _)| key.clone()).collect(),
            revision: state.revision.max(revision),
        })
    }

    fn record_use(&self, uses: &[(KeyId, i64)]) -> Result<(), RepositoryError> {
        let mut state = self.state();
        for (id, at) in uses {
            if let Some((key, _)) = state.keys.iter_mut().find(|(key, _)| key.id == *id) {
                key.last_used_at = Some(key.last_used_at.map_or(*at, |last| last.max(*at)));
            }
        }
        Ok(())
    }
}
