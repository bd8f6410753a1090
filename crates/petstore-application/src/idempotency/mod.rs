//! Idempotent retries (`Idempotency-Key`): whether a POST with a key is carried out, answered
//! from the response stored for its key, or refused; and the purge of stored responses after
//! their retention. The write itself and its record are stored together by the resource's
//! repository (`RecordPlan`); this module decides, the adapters store.
//!
//! Two requests with one key at once on one instance: the second is refused as in flight (409).
//! On two instances: both may be carried out as far as storage, where the record of the first
//! to commit wins and the other's write is not stored; it is answered from that record.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::UNIX_EPOCH;

use petstore_domain::{IdempotencyKey, IdempotencyRetention};

mod ports;
mod record;
#[cfg(test)]
mod tests;

pub use ports::IdempotencyStore;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockIdempotencyStore;
pub use record::{
    Fingerprint, IdempotencyRecord, KeyOwner, RecordPlan, Recorded, Render, StoredResponse,
};

use crate::clock::Clock;
use crate::storage::RepositoryError;

/// What to do with a request that carries an idempotency key.
#[derive(Debug)]
pub enum Admission {
    /// Carry it out, recording its response with [`Claim::plan`] or [`Idempotency::record`].
    Proceed(Claim),
    /// Answer with this response again: the key's first request got it.
    Replay(StoredResponse),
    /// The key was used for a different request (another method, path or body): 422.
    Reused,
    /// The key's first request is still being carried out on this instance: 409, retry later.
    InFlight,
}

type InFlightKeys = Arc<Mutex<HashSet<(KeyOwner, IdempotencyKey)>>>;

/// The right to carry out the request of one key on this instance, until dropped.
#[derive(Debug)]
pub struct Claim {
    owner: KeyOwner,
    key: IdempotencyKey,
    fingerprint: Fingerprint,
    stored_at: i64,
    in_flight: InFlightKeys,
}

impl Claim {
    /// The plan for the write's repository: store the record of its result with it.
    pub fn plan<T>(&self, render: Render<T>) -> RecordPlan<T> {
        RecordPlan {
            owner: self.owner.clone(),
            key: self.key.clone(),
            fingerprint: self.fingerprint,
            stored_at: self.stored_at,
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
            .remove(&(self.owner.clone(), self.key.clone()));
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
        self.clock
            .now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
            })
    }

    /// Records stored before this (seconds since the epoch) are past their retention at `now`:
    /// exactly those [`IdempotencyRetention::keeps`] no longer keeps.
    fn cutoff(&self, now: i64) -> i64 {
        let retention = i64::try_from(self.retention.get().as_secs()).unwrap_or(i64::MAX);
        now.saturating_sub(retention).saturating_add(1)
    }

    /// Decides what becomes of a request with `owner`'s `key` and `fingerprint`.
    pub async fn admit(
        &self,
        owner: KeyOwner,
        key: IdempotencyKey,
        fingerprint: Fingerprint,
    ) -> Result<Admission, RepositoryError> {
        let entry = (owner, key);
        if !self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(entry.clone())
        {
            return Ok(Admission::InFlight);
        }
        let now = self.now();
        let (owner, key) = entry;
        // Held from here on: an early return below gives the key back.
        let claim = Claim {
            owner,
            key,
            fingerprint,
            stored_at: now,
            in_flight: Arc::clone(&self.in_flight),
        };
        match self.store.find(&claim.owner, &claim.key).await? {
            Some(record) if self.retention.keeps(record.stored_at, now) => {
                Ok(Self::answer(&record, fingerprint))
            }
            Some(_) => {
                let cutoff = self.cutoff(now);
                self.store
                    .remove_expired(&claim.owner, &claim.key, cutoff)
                    .await?;
                Ok(Admission::Proceed(claim))
            }
            None => Ok(Admission::Proceed(claim)),
        }
    }

    /// How a request with `fingerprint` is answered from the record stored for its key.
    pub fn answer(record: &IdempotencyRecord, fingerprint: Fingerprint) -> Admission {
        if record.fingerprint == fingerprint {
            Admission::Replay(record.response.clone())
        } else {
            Admission::Reused
        }
    }

    /// Stores the response of a claimed request that changed nothing (a refusal such as 404 or
    /// 409): its retry gets the same answer. When a record got there first (another instance),
    /// how to answer from it instead.
    pub async fn record(
        &self,
        claim: Claim,
        response: StoredResponse,
    ) -> Result<Option<Admission>, RepositoryError> {
        let record = IdempotencyRecord {
            owner: claim.owner.clone(),
            key: claim.key.clone(),
            fingerprint: claim.fingerprint,
            response,
            stored_at: claim.stored_at,
        };
        let earlier = self.store.insert(record).await?;
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
