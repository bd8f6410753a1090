//! What every adapter gives a new event: a random id and the time it was written. Shared by the
//! `memory:` store and the SQL outbox, so both make ids alike.

use std::time::{SystemTime, UNIX_EPOCH};

use petstore_application::RepositoryError;
use petstore_domain::{EventId, EventType};

/// Random bytes drawn from the operating system per refill of a thread's pool: ids for 256
/// events per system call.
const POOL_BYTES: usize = 16 * 256;

thread_local! {
    /// This thread's unused random bytes, and where the unused ones start.
    static POOL: std::cell::RefCell<(Vec<u8>, usize)> =
        const { std::cell::RefCell::new((Vec::new(), POOL_BYTES)) };
}

/// A new event's id, from the operating system's random source.
pub(crate) fn new_event_id() -> Result<EventId, RepositoryError> {
    Ok(new_event_ids(1)?.remove(0))
}

/// `count` new event ids, each 16 bytes of the operating system's random source, read ahead in
/// a pool per thread so that a system call serves many events (the bytes are used once each).
pub(crate) fn new_event_ids(count: usize) -> Result<Vec<EventId>, RepositoryError> {
    POOL.with_borrow_mut(|(bytes, next)| {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            if *next + 16 > bytes.len() {
                bytes.resize(POOL_BYTES, 0);
                getrandom::fill(bytes).map_err(|err| {
                    RepositoryError::Unexpected(format!("no random event id: {err}").into())
                })?;
                *next = 0;
            }
            let mut id = [0_u8; 16];
            id.copy_from_slice(&bytes[*next..*next + 16]);
            *next += 16;
            ids.push(EventId::from_random(id));
        }
        Ok(ids)
    })
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Counts an event written (into a transaction that may still roll back: the count is of
/// events written, not only committed).
pub(crate) fn count_written(event_type: EventType) {
    metrics::counter!("petstore_events_written_total", "type" => event_type.as_str()).increment(1);
}
