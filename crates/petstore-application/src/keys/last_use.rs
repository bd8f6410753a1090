//! Last use: marked in memory on each request (see `check.rs`), written to the registry in
//! batches, off the request path.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use petstore_domain::KeyId;

use super::{Entry, KeyDirectory};
use crate::storage::RepositoryError;

impl KeyDirectory {
    /// Writes the last-use minutes not yet recorded to the registry; returns how many keys.
    pub fn record_uses(&self) -> Result<usize, RepositoryError> {
        let pending: Vec<(Arc<Entry>, i64)> = {
            let entries = self
                .inner
                .entries
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            entries
                .values()
                .filter_map(|entry| {
                    let used = entry.used_minute.load(Ordering::Relaxed);
                    (used > entry.recorded_minute.load(Ordering::Relaxed))
                        .then(|| (Arc::clone(entry), used))
                })
                .collect()
        };
        if pending.is_empty() {
            return Ok(0);
        }
        // A use is recorded to the minute; a key used in the minute it was issued would else
        // show a last use before its creation.
        let uses: Vec<(KeyId, i64)> = pending
            .iter()
            .map(|(entry, minute)| {
                (
                    entry.id.clone(),
                    minute.saturating_mul(60).max(entry.created_at),
                )
            })
            .collect();
        self.inner.repository.record_use(&uses)?;
        for (entry, minute) in &pending {
            entry.recorded_minute.fetch_max(*minute, Ordering::Relaxed);
        }
        Ok(pending.len())
    }
}
