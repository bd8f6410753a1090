//! The key directory: each instance's in-process view of the key registry, consulted on every
//! request without a database round trip.
//!
//! The directory holds every key the registry has recorded (id, scope, expiry, revoked or not):
//! - `refresh.rs` brings it up to date incrementally, from the last registry revision it saw; the
//!   composition root calls it every quarter second, which is how a key revoked on one instance
//!   stops working on all of them within a second;
//! - `check.rs` is the request-time side. A correctly signed token whose key the directory does
//!   not know yet (issued a moment ago by another process) is looked up at once: one registry
//!   read serves every request waiting for it, and a key still unknown after it (issued for
//!   another database, or minted with a leaked secret but never issued) is refused and
//!   remembered as unknown for [`MISS_TTL`] (`unknown_keys.rs`). When the registry cannot be
//!   read, the directory keeps what it knew and says for how long (readiness reports it); it
//!   never falls back to accepting every key;
//! - `last_use.rs` writes last use, tracked in memory (an atomic per key, touched at most once a
//!   minute per key), off the request path;
//! - `commands.rs` is the administrators' side: issuing, revoking and listing keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use petstore_domain::{KeyId, KeyScope, TokenDigest};

mod check;
mod commands;
mod last_use;
mod ports;
mod refresh;
mod unknown_keys;

#[cfg(any(test, feature = "mocks"))]
pub use ports::MockKeyRegistry;
pub use ports::{KeyChanges, KeyRegistry, Revocation};

use unknown_keys::UnknownKeys;

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
    unknown: UnknownKeys,
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
                unknown: UnknownKeys::default(),
            }),
        };
        directory.refresh()?;
        Ok(directory)
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

#[cfg(test)]
mod tests;
