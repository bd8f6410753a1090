//! The key directory: each instance's in-process view of the key registry, consulted on every
//! request without a database round trip.
//!
//! The directory holds every key the registry has recorded (id, scope, expiry, revoked or not).
//! [`refresh`](KeyDirectory::refresh) brings it up to date incrementally, from the last registry
//! revision it saw; the composition root calls it every quarter second, which is how a key
//! revoked on one instance stops working on all of them within a second. A correctly signed
//! token whose key the directory does not know yet (issued a moment ago by another process) is
//! looked up at once ([`look_up`](KeyDirectory::look_up)): one registry read serves every
//! request waiting for it, and a key still unknown after it (one issued for another database,
//! or minted with a leaked secret but never issued) is refused, and remembered as unknown for
//! [`MISS_TTL`] so that repeated tokens for it do not read the registry again. When the registry cannot be read, the directory keeps what it knew and
//! [`stale_for`](KeyDirectory::stale_for) says for how long (readiness reports it); it never
//! falls back to accepting every key.
//!
//! Last use is tracked in memory (an atomic per key, touched at most once a minute per key) and
//! written by [`record_uses`](KeyDirectory::record_uses), off the request path.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use petstore_domain::{ApiKey, KeyId, KeyName, KeyScope, TokenDigest};

mod ports;

#[cfg(any(test, feature = "mocks"))]
pub use ports::MockKeyRegistry;
pub use ports::{KeyChanges, KeyRegistry, Revocation};

use crate::clock::Clock;
use crate::storage::RepositoryError;

/// Why a verified token's key may not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyRefusal {
    #[error("the key is not in the registry")]
    Unknown,
    #[error("the key was revoked")]
    Revoked,
    #[error("the key has expired")]
    Expired,
    /// Signed with the right secret, but not the token issued for the key: minted by someone
    /// who holds the secret, with claims of their own.
    #[error("the token is not the one issued for the key")]
    NotIssued,
}

/// How long a key found unknown by a lookup is refused without reading the registry again. The
/// periodic refresh still runs meanwhile, so a key recorded since is not kept out longer than
/// a refresh interval.
pub const MISS_TTL: Duration = Duration::from_secs(1);

/// Most keys remembered as unknown at once. Only correctly signed tokens get this far, so many
/// distinct unknown keys mean a leaked secret; past this bound a miss is simply not remembered.
const MAX_MISSES: usize = 1024;

/// Why a [`look_up`](KeyDirectory::look_up) did not give a scope.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Refused(#[from] KeyRefusal),
    /// The registry could not be read; whether the key is usable is unknown.
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// The in-process view of the key registry. Cheap to clone; clones share it.
#[derive(Clone)]
pub struct KeyDirectory {
    inner: Arc<Inner>,
}

struct Inner {
    repository: Arc<dyn KeyRegistry>,
    clock: Arc<dyn Clock>,
    entries: RwLock<HashMap<String, Arc<Entry>>>,
    /// The registry revision the entries reflect; only refreshes read and move it.
    revision: Mutex<i64>,
    /// When the registry was last read successfully.
    refreshed_at: Mutex<SystemTime>,
    /// How many refreshes have started reading the registry, and the latest to have finished.
    refreshes_started: AtomicU64,
    refresh_finished: AtomicU64,
    /// Taken by lookups, so that those waiting for the same read share it.
    lookup: Mutex<()>,
    /// Keys a lookup found unknown, with when.
    misses: Mutex<HashMap<String, SystemTime>>,
}

/// What a request needs to know about a key, plus its last use.
struct Entry {
    id: KeyId,
    scope: KeyScope,
    /// `None`: recorded before tokens were bound; any correctly signed token passes.
    token_digest: Option<TokenDigest>,
    /// When the key was issued (Unix seconds): no use is recorded before it.
    created_at: i64,
    state: EntryState,
    /// The minute (Unix seconds / 60) of the key's latest use seen here.
    used_minute: AtomicI64,
    /// The latest minute written to the registry.
    recorded_minute: AtomicI64,
}

#[derive(Clone, Copy)]
enum EntryState {
    Revoked,
    ExpiresAt(Option<i64>),
}

impl std::fmt::Debug for KeyDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyDirectory")
            .field("keys", &self.len())
            .finish_non_exhaustive()
    }
}

fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    })
}

impl KeyDirectory {
    /// A directory over `repository`, loaded with every key it holds now.
    pub fn load(
        repository: Arc<dyn KeyRegistry>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, RepositoryError> {
        let now = clock.now();
        let directory = Self {
            inner: Arc::new(Inner {
                repository,
                clock,
                entries: RwLock::default(),
                revision: Mutex::new(0),
                refreshed_at: Mutex::new(now),
                refreshes_started: AtomicU64::new(0),
                refresh_finished: AtomicU64::new(0),
                lookup: Mutex::new(()),
                misses: Mutex::default(),
            }),
        };
        directory.refresh()?;
        Ok(directory)
    }

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

    /// Whether a lookup of `id` may read the registry: `false` while a recent lookup found it
    /// unknown ([`MISS_TTL`]). Cheap; for the caller to decide before it hands the lookup to a
    /// thread that may block.
    pub fn worth_looking_up(&self, id: &str) -> bool {
        let misses = self
            .inner
            .misses
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        misses.get(id).is_none_or(|missed_at| {
            self.inner
                .clock
                .now()
                .duration_since(*missed_at)
                .unwrap_or_default()
                >= MISS_TTL
        })
    }

    /// [`check`](Self::check) for a key the directory did not know when `check` was called:
    /// reads the registry's changes first, unless the key arrived meanwhile or a read that
    /// started since has finished. Lookups take turns, so requests waiting for the same key (or
    /// for others) share one read. A key still unknown is
    /// remembered as such for [`MISS_TTL`]. Blocking; call it where a thread may wait.
    pub fn look_up(&self, id: &str, presented: &TokenDigest) -> Result<KeyScope, LookupError> {
        // A read that finished while this one waited for its turn may have brought the key.
        self.read_in_turn(|| matches!(self.check(id, presented), Err(KeyRefusal::Unknown)))?;
        match self.check(id, presented) {
            Err(KeyRefusal::Unknown) => {
                self.remember_miss(id);
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

    fn remember_miss(&self, id: &str) {
        let now = self.inner.clock.now();
        let mut misses = self
            .inner
            .misses
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if misses.len() >= MAX_MISSES {
            misses.retain(|_, missed_at| {
                now.duration_since(*missed_at).unwrap_or_default() < MISS_TTL
            });
        }
        if misses.len() < MAX_MISSES {
            misses.insert(id.to_owned(), now);
        }
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

    /// How many keys the directory knows.
    pub fn len(&self) -> usize {
        self.inner
            .entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

#[cfg(test)]
mod tests;
