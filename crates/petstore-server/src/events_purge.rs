//! The event feed's upkeep: a task on the server's runtime that purges events past the
//! retention in bounded rounds, with the webhook deliveries finished as long ago, and measures
//! how far the feed lags behind the writes.
//!
//! A round deletes at most [`BATCH`] events; while rounds come back full, the next follows at
//! once, so a backlog drains without any one statement deleting more than a batch. Rounds run
//! every quarter of the retention, at most every minute, so an event is gone at most a quarter
//! of the retention (or a minute) after it expired.

use std::time::Duration;

use petstore_application::{DeliveryService, EventService};

/// Most often and least often the purge runs.
const INTERVAL_MAX: Duration = Duration::from_secs(60);
const INTERVAL_MIN: Duration = Duration::from_millis(100);

/// Most events one round deletes.
const BATCH: usize = 1_000;

/// How often the purge runs for `retention`.
fn interval(retention: Duration) -> Duration {
    (retention / 4).clamp(INTERVAL_MIN, INTERVAL_MAX)
}

/// Describes the feed's metrics for `/metrics`.
pub(crate) fn describe_metrics() {
    metrics::describe_counter!(
        "petstore_events_written_total",
        "Events written, by type, into the transactions of the changes they record (a \
         transaction rolled back after its event was written counts too)."
    );
    metrics::describe_gauge!(
        "petstore_event_feed_lag_seconds",
        metrics::Unit::Seconds,
        "How long the oldest event stored but not yet readable has waited: on PostgreSQL an \
         event is read only once every older transaction ended, so a long transaction holds \
         the feed back. 0 on SQLite and memory."
    );
    metrics::describe_counter!(
        "petstore_events_purged_total",
        "Events deleted because they were older than the retention."
    );
}

/// Starts the upkeep on the current actix runtime; it ends with the runtime.
pub(crate) fn spawn(events: EventService, deliveries: Option<DeliveryService>) {
    let every = interval(events.retention());
    // Both series exist from the start, so a scrape before the first round finds them.
    metrics::gauge!("petstore_event_feed_lag_seconds").set(0.0);
    metrics::counter!("petstore_events_purged_total").increment(0);
    actix_web::rt::spawn(async move {
        let mut ticks =
            actix_web::rt::time::interval_at(actix_web::rt::time::Instant::now() + every, every);
        loop {
            ticks.tick().await;
            purge(&events).await;
            if let Some(deliveries) = &deliveries {
                purge_deliveries(deliveries, events.retention()).await;
            }
            match events.lag().await {
                Ok(lag) => {
                    metrics::gauge!("petstore_event_feed_lag_seconds").set(lag.as_secs_f64())
                }
                Err(error) => tracing::warn!(%error, "measuring the event feed's lag failed"),
            }
        }
    });
}

/// Rounds until one comes back short; each deleting round is logged with the total so far.
async fn purge(events: &EventService) {
    let mut total = 0;
    loop {
        match events.purge_round(BATCH).await {
            Ok(round) => {
                total += round.deleted;
                metrics::counter!("petstore_events_purged_total").increment(round.deleted);
                if round.deleted > 0 {
                    tracing::info!(
                        deleted = round.deleted,
                        total,
                        more = round.full,
                        "purged events past the retention"
                    );
                }
                if !round.full {
                    return;
                }
            }
            // Storage is down: the next tick tries again; the feed stays correct meanwhile
            // (events past the retention are only kept longer).
            Err(error) => {
                tracing::warn!(%error, "purging events past the retention failed");
                return;
            }
        }
    }
}

/// Deletes the webhook deliveries finished before the retention, a batch at a time.
async fn purge_deliveries(deliveries: &DeliveryService, retention: Duration) {
    loop {
        match deliveries.purge_finished(retention, BATCH).await {
            Ok(deleted) if deleted > 0 => {
                tracing::info!(deleted, "purged webhook deliveries past the retention");
                if deleted < BATCH as u64 {
                    return;
                }
            }
            Ok(_) => return,
            Err(error) => {
                tracing::warn!(%error, "purging webhook deliveries past the retention failed");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_runs_every_quarter_retention_between_its_bounds() {
        assert_eq!(interval(Duration::from_secs(30 * 86_400)), INTERVAL_MAX);
        assert_eq!(interval(Duration::from_secs(2)), Duration::from_millis(500));
        assert_eq!(interval(Duration::from_millis(1)), INTERVAL_MIN);
    }
}
