//! Bringing the directory up to date from the registry's changes since the revision it last saw.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, PoisonError};

use petstore_domain::ApiKey;

use super::{Entry, EntryState, KeyDirectory};
use crate::storage::RepositoryError;

impl KeyDirectory {
    /// Reads the registry's changes since the last refresh into the directory; returns how many
    /// keys changed. On failure the directory keeps what it knew.
    pub fn refresh(&self) -> Result<usize, RepositoryError> {
        let mut revision = self
            .inner
            .revision
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let generation = self.inner.refreshes_started.fetch_add(1, Ordering::AcqRel) + 1;
        let changes = self.inner.repository.changes_since(*revision)?;
        let changed = changes.keys.len();
        if changed > 0 {
            let mut entries = self
                .inner
                .entries
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            for key in changes.keys {
                let previous = entries.get(key.id.as_str());
                let entry = Entry::new(&key, previous.map(Arc::as_ref));
                entries.insert(key.id.as_str().to_owned(), Arc::new(entry));
            }
        }
        *revision = changes.revision.max(*revision);
        *self
            .inner
            .refreshed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = self.inner.clock.now();
        self.inner
            .refresh_finished
            .fetch_max(generation, Ordering::AcqRel);
        Ok(changed)
    }
}

impl Entry {
    fn new(key: &ApiKey, previous: Option<&Entry>) -> Self {
        let state = if key.revoked_at.is_some() {
            EntryState::Revoked
        } else {
            EntryState::ExpiresAt(key.expires_at)
        };
        let recorded = key.last_used_at.map_or(i64::MIN, |at| at / 60);
        let used = previous.map_or(recorded, |entry| {
            entry.used_minute.load(Ordering::Relaxed).max(recorded)
        });
        Self {
            id: key.id.clone(),
            scope: key.scope,
            token_digest: key.token_digest,
            created_at: key.created_at,
            state,
            used_minute: AtomicI64::new(used),
            recorded_minute: AtomicI64::new(recorded),
        }
    }
}
