//! The purge of idempotency records past their retention: a task on the server's runtime that
//! removes them in bounded batches every minute, so the table holds about a retention's worth
//! of keyed requests and no statement deletes more than a batch at once.

use std::time::Duration;

use petstore_application::Idempotency;

/// How often expired records are looked for.
const INTERVAL: Duration = Duration::from_secs(60);

/// Most records one statement removes.
const BATCH: usize = 1_000;

/// Starts the purge on the current actix runtime; it ends with the runtime.
pub(crate) fn spawn(idempotency: Idempotency) {
    actix_web::rt::spawn(async move {
        // The first round a minute after start: a start (every instance's, in a rolling
        // restart) begins by serving, not by a delete, and a store that is failing is met by
        // the requests first, whose traces the fault's log line then names.
        let first = actix_web::rt::time::Instant::now() + INTERVAL;
        let mut ticks = actix_web::rt::time::interval_at(first, INTERVAL);
        loop {
            ticks.tick().await;
            match idempotency.purge_expired(BATCH).await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "purged expired idempotency records"),
                // Storage is down: the next round tries again; replays stay correct meanwhile
                // (an expired record is never replayed).
                Err(error) => tracing::warn!(%error, "purging expired idempotency records failed"),
            }
        }
    });
}
