//! The request-time side of the directory: whether a token's key may be used now, the lookup of
//! a key issued a moment ago, and how stale the directory is.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;
use std::time::Duration;

use petstore_domain::{KeyScope, TokenDigest};

use super::{EntryState, KeyDirectory, KeyRefusal, LookupError};
use crate::clock::unix_seconds;
use crate::storage::RepositoryError;

impl KeyDirectory {
    /// Whether the key `id` (a token's `jti`) may be used now by the token whose digest is
    /// `presented`, and with which scope. Marks it used. The request path's only call: a read
    /// lock, a hash lookup and a 32-byte comparison (the digest is computed once per token, by
    /// the caller's cache of verified tokens).
    pub fn check(&self, id: &str, presented: &TokenDigest) -> Result<KeyScope, KeyRefusal> {
        let entries = self
            .inner
            .entries
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get(id).ok_or(KeyRefusal::Unknown)?;
        if entry
            .token_digest
            .is_some_and(|issued| issued != *presented)
        {
            return Err(KeyRefusal::NotIssued);
        }
        let now = unix_seconds(self.inner.clock.now());
        match entry.state {
            EntryState::Revoked => return Err(KeyRefusal::Revoked),
            EntryState::ExpiresAt(Some(expires)) if now >= expires => {
                return Err(KeyRefusal::Expired)
            }
            EntryState::ExpiresAt(_) => {}
        }
        let minute = now / 60;
        if entry.used_minute.load(Ordering::Relaxed) < minute {
            entry.used_minute.fetch_max(minute, Ordering::Relaxed);
        }
        Ok(entry.scope)
    }

    /// Whether a lookup of `id` may read the registry: `false` while a recent lookup found it
    /// unknown ([`MISS_TTL`](super::MISS_TTL)). Cheap; for the caller to decide before it hands
    /// the lookup to a thread that may block.
    pub fn worth_looking_up(&self, id: &str) -> bool {
        !self
            .inner
            .unknown
            .recently_missed(id, self.inner.clock.now())
    }

    /// [`check`](Self::check) for a key the directory did not know when `check` was called:
    /// reads the registry's changes first, unless the key arrived meanwhile or a read that
    /// started since has finished. Lookups take turns, so requests waiting for the same key (or
    /// for others) share one read. A key still unknown is remembered as such for
    /// [`MISS_TTL`](super::MISS_TTL). Blocking; call it where a thread may wait.
    pub fn look_up(&self, id: &str, presented: &TokenDigest) -> Result<KeyScope, LookupError> {
        // A read that finished while this one waited for its turn may have brought the key.
        self.read_in_turn(|| matches!(self.check(id, presented), Err(KeyRefusal::Unknown)))?;
        match self.check(id, presented) {
            Err(KeyRefusal::Unknown) => {
                self.inner.unknown.remember(id, self.inner.clock.now());
                Err(KeyRefusal::Unknown.into())
            }
            answer => Ok(answer?),
        }
    }

    /// Reads the registry's changes now, unless a read that started after this call has
    /// finished meanwhile: callers that come together share one read. For readiness, once
    /// storage is back, so that it need not wait for the next periodic refresh. Blocking.
    pub fn catch_up(&self) -> Result<(), RepositoryError> {
        self.read_in_turn(|| true)
    }

    /// Reads the registry's changes in the callers' turn, if `still_needed` once the turn came,
    /// and unless a read that started after this call has finished meanwhile (it saw everything
    /// recorded before the call): callers that come together share one read.
    fn read_in_turn(&self, still_needed: impl FnOnce() -> bool) -> Result<(), RepositoryError> {
        // The first refresh to start from now on sees every key recorded before this call.
        let needed = self.inner.refreshes_started.load(Ordering::Acquire) + 1;
        let _turn = self
            .inner
            .lookup
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if still_needed() && self.inner.refresh_finished.load(Ordering::Acquire) < needed {
            self.refresh()?;
        }
        Ok(())
    }

    /// How long since the registry was last read successfully.
    pub fn stale_for(&self) -> Duration {
        let refreshed_at = *self
            .inner
            .refreshed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.inner
            .clock
            .now()
            .duration_since(refreshed_at)
            .unwrap_or_default()
    }
}
