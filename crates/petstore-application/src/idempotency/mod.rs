//! Idempotent retries (`Idempotency-Key`): whether a write with a key is carried out, answered
//! from the response stored for its key, or refused; and the purge of stored responses after
//! their retention. The write itself and its record are stored together by the resource's
//! repository, given a [`RecordPlan`]; this module decides, the adapters store.
//!
//! A request with a key is claimed on this instance (a second one meanwhile is in flight: 409)
//! and carried out; its write stores its record, unless a record for the key is stored already
//! and within its retention: then the write is undone and the request is answered from that
//! record (the same request: replayed; another: 422). There is no lookup before the write, so a
//! first request (the usual case) costs no extra round trip. On two instances at once, the
//! first to commit wins and the other is answered from its record.
//!
//! Besides writes, only refusals that depend on the request alone are recorded
//! ([`Idempotency::record_refusal`]): a retry of a malformed request is refused alike, while a
//! refusal that depends on what is stored (not found, a conflict) may not hold on the retry.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use petstore_domain::{IdempotencyKey, IdempotencyRetention, KeyId};

mod ports;
mod record;
#[cfg(test)]
mod tests;

pub use ports::IdempotencyStore;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockIdempotencyStore;
pub use record::{Fingerprint, IdempotencyRecord, RecordPlan, Render, StoredResponse, Written};

use crate::clock::{unix_seconds, Clock};
use crate::storage::RepositoryError;

/// What to do with a request that carries an idempotency key.
#[derive(Debug)]
pub enum Admission {
    /// Carry it out, recording its response with [`Claim::plan`] or [`Idempotency::record`].
    Proceed(Claim),
    /// The key's first request is still being carried out on this instance: 409, retry later.
    InFlight,
}

/// How a request is answered from the record stored first for its key.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// The same request: its response again.
    Replay(StoredResponse),
    /// The key was used for a different request (another method, path or body): 422.
    Reused,
}

/// An idempotency key with the API key that sent it: another API key's request with the same
/// idempotency key is another request.
type OwnedKey = (KeyId, IdempotencyKey);

/// The keys being carried out here. A claim and the set share its key, so neither taking nor
/// giving back a key copies it, and the lock is held for the set's own work only.
type InFlightKeys = Arc<Mutex<HashSet<Arc<OwnedKey>>>>;

/// The right to carry out the request of one key on this instance, until dropped.
#[derive(Debug)]
pub struct Claim {
    key: Arc<OwnedKey>,
    fingerprint: Fingerprint,
    stored_at: i64,
    expired_before: i64,
    in_flight: InFlightKeys,
}

impl Claim {
    /// The plan for the write's repository: store the record of its result with it.
    pub fn plan<T>(&self, render: Render<T>) -> RecordPlan<T> {
        RecordPlan {
            owner: self.key.0.clone(),
            key: self.key.1.clone(),
            fingerprint: self.fingerprint,
            stored_at: self.stored_at,
            expired_before: self.expired_before,
            render,
        }
    }

    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&*self.key);
    }
}

/// Idempotent retries over whichever store the composition root chose.
#[derive(Clone)]
pub struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
    retention: IdempotencyRetention,
    in_flight: InFlightKeys,
}

impl std::fmt::Debug for Idempotency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl Idempotency {
    pub fn new(
        store: Arc<dyn IdempotencyStore>,
        clock: Arc<dyn Clock>,
        retention: IdempotencyRetention,
    ) -> Self {
        Self {
            store,
            clock,
            retention,
            in_flight: Arc::default(),
        }
    }

    fn now(&self) -> i64 {
        unix_seconds(self.clock.now())
    }

    /// Records stored before this (seconds since the epoch) are past their retention at `now`:
    /// exactly those [`IdempotencyRetention::keeps`] no longer keeps.
    fn cutoff(&self, now: i64) -> i64 {
        let retention = i64::try_from(self.retention.get().as_secs()).unwrap_or(i64::MAX);
        now.saturating_sub(retention)
    }

    /// Claims `owner`'s `key` for a request with `fingerprint` on this instance, unless a
    /// request with it is being carried out here already.
    pub fn admit(&self, owner: KeyId, key: IdempotencyKey, fingerprint: Fingerprint) -> Admission {
        let key = Arc::new((owner, key));
        let shared = Arc::clone(&key);
        if !self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(shared)
        {
            return Admission::InFlight;
        }
        let now = self.now();
        Admission::Proceed(Claim {
            key,
            fingerprint,
            stored_at: now,
            expired_before: self.cutoff(now),
            in_flight: Arc::clone(&self.in_flight),
        })
    }

    /// How a request with `fingerprint` is answered from the record stored first for its key.
    pub fn answer(record: &IdempotencyRecord, fingerprint: Fingerprint) -> Answer {
        if record.fingerprint == fingerprint {
            Answer::Replay(record.response.clone())
        } else {
            Answer::Reused
        }
    }

    /// How the claimed request is answered from a record stored earlier for its key, if one is
    /// within its retention: for an action whose record is stored after it rather than in its
    /// transaction ([`record_refusal`](Self::record_refusal) stores it then).
    pub async fn earlier(&self, claim: &Claim) -> Result<Option<Answer>, RepositoryError> {
        let record = self.store.find(&claim.key.0, &claim.key.1).await?;
        Ok(record
            .filter(|record| record.stored_at >= claim.expired_before)
            .map(|record| Self::answer(&record, claim.fingerprint)))
    }

    /// Stores the refusal of a claimed request that depends on the request alone (malformed,
    /// invalid): its retry gets the same answer. When a record for the key was stored first (an
    /// earlier request, or another instance meanwhile), how to answer from it instead.
    pub async fn record_refusal(
        &self,
        claim: Claim,
        response: StoredResponse,
    ) -> Result<Option<Answer>, RepositoryError> {
        let record = IdempotencyRecord {
            owner: claim.key.0.clone(),
            key: claim.key.1.clone(),
            fingerprint: claim.fingerprint,
            response,
            stored_at: claim.stored_at,
        };
        let earlier = self.store.insert(record, claim.expired_before).await?;
        Ok(earlier.map(|record| Self::answer(&record, claim.fingerprint)))
    }

    /// Removes records past their retention, `batch` at a time, until none is left; how many.
    pub async fn purge_expired(&self, batch: usize) -> Result<usize, RepositoryError> {
        let cutoff = self.cutoff(self.now());
        let mut removed = 0;
        loop {
            let this_time = self.store.purge(cutoff, batch).await?;
            removed += this_time;
            if this_time < batch {
                return Ok(removed);
            }
        }
    }
}
