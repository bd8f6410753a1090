//! What is kept for an idempotency key: who sent it, what the request was (its fingerprint) and
//! the response it got, byte for byte; the plan a write is given to store it; and what a write
//! with or without a plan came to.

use petstore_domain::{IdempotencyKey, KeyId};

/// A digest of what makes a request the same request (method, path, body), computed by the
/// adapter that received it. Two requests with one key and different fingerprints are a
/// client's mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

/// A response as it was sent, to be sent again: status, the headers that describe the result
/// (`Content-Type`, `Location`, ...) and the body's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One stored response for one idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// The API key that sent it: another API key's request with the same idempotency key is
    /// another request.
    pub owner: KeyId,
    pub key: IdempotencyKey,
    pub fingerprint: Fingerprint,
    pub response: StoredResponse,
    /// Seconds since the Unix epoch.
    pub stored_at: i64,
}

/// Turns a write's result into the response recorded for its key, so that the record can be
/// stored in the write's own transaction. Given by the adapter that answers the request, which
/// sends the same response (or, for a result carrying a secret, a response with the secret that
/// is never recorded).
///
/// Why a rendered response and not the result: a replay must be the bytes the client got
/// although the resource may have changed since, a crash must keep the write and its record or
/// neither, and the release before reads the same rows during a rolling restart.
pub type Render<T> = fn(&T) -> StoredResponse;

/// A write to be recorded under an idempotency key: storage stores the record
/// ([`RecordPlan::record_for`] its result) in the same transaction as the write, so a crash
/// keeps both or neither.
#[derive(Clone)]
pub struct RecordPlan<T> {
    pub owner: KeyId,
    pub key: IdempotencyKey,
    pub fingerprint: Fingerprint,
    pub stored_at: i64,
    /// A record for the key stored before this (seconds since the epoch) is past its retention:
    /// the write replaces it instead of being answered from it.
    pub expired_before: i64,
    pub render: Render<T>,
}

impl<T> std::fmt::Debug for RecordPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordPlan")
            .field("owner", &self.owner)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl<T> RecordPlan<T> {
    /// The record of this write, once it produced `result`.
    pub fn record_for(&self, result: &T) -> IdempotencyRecord {
        IdempotencyRecord {
            owner: self.owner.clone(),
            key: self.key.clone(),
            fingerprint: self.fingerprint,
            response: (self.render)(result),
            stored_at: self.stored_at,
        }
    }

    /// Whether `record`, stored for this plan's key, still answers for it (is within its
    /// retention); an expired one is replaced by this write.
    pub fn is_answered_by(&self, record: &IdempotencyRecord) -> bool {
        record.stored_at >= self.expired_before
    }
}

/// What a write came to; every write port method answers with it, given a plan or not.
#[derive(Debug)]
pub enum Written<T> {
    /// Carried out. With a plan, its record was stored with it and holds this response, which
    /// is what the client is sent: the first answer and every replay are the same bytes by
    /// construction, rendered once.
    Done(T, Option<StoredResponse>),
    /// Not carried out: a live record for the plan's key was stored first (a retry, another
    /// instance, an earlier create of the same group). The caller answers from it. Never
    /// without a plan.
    Earlier(IdempotencyRecord),
}

impl<T> Written<T> {
    /// The result of a write that was carried out; `None` when it was answered from a record.
    pub fn done(self) -> Option<T> {
        match self {
            Self::Done(result, _) => Some(result),
            Self::Earlier(_) => None,
        }
    }
}
