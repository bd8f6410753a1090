//! What every adapter gives a new event: a random id and the time it was written. Shared by the
//! `memory:` store and the SQL outbox, so both make ids alike.

use std::time::{SystemTime, UNIX_EPOCH};

use petstore_application::RepositoryError;
use petstore_domain::{EventId, EventType};

/// A new event's id, from the operating system's random source.
pub(crate) fn new_event_id() -> Result<EventId, RepositoryError> {
    Ok(new_event_ids(1)?.remove(0))
}

/// `count` new event ids, from one read of the operating system's random source (a group of
/// creates takes one system call, not one per event).
pub(crate) fn new_event_ids(count: usize) -> Result<Vec<EventId>, RepositoryError> {
    let mut bytes = vec![0_u8; 16 * count];
    getrandom::fill(&mut bytes)
        .map_err(|err| RepositoryError::Unexpected(format!("no random event id: {err}").into()))?;
    Ok(bytes
        .chunks_exact(16)
        .map(|chunk| {
            let mut id = [0_u8; 16];
            id.copy_from_slice(chunk);
            EventId::from_random(id)
        })
        .collect())
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
