//! The delivery worker: a thread of its own with a single-threaded runtime, so that no TLS
//! handshake or slow endpoint ever runs on the API's workers. It fans the feed's new events out
//! to the endpoints, makes the attempts that are due, and reports each in the log and the
//! metrics; idle, it looks again every [`TICK`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use petstore_application::webhooks::{AttemptReport, DeliveryRound, EndpointHealth, NextStep};
use petstore_application::DeliveryService;

/// How often an idle worker looks for new events and due attempts.
const TICK: Duration = Duration::from_millis(200);

/// How often the age of the oldest pending delivery is measured.
const GAUGE_INTERVAL: Duration = Duration::from_secs(5);

/// Describes the webhook metrics for `/metrics`.
pub(crate) fn describe_metrics() {
    metrics::describe_counter!(
        "petstore_webhook_attempts_total",
        "Delivery attempts, by result: `2xx`, or why one failed (`status`, `timeout`, \
         `connect`, `tls`, `dns`, `blocked_address`, `redirect`, `protocol`)."
    );
    metrics::describe_histogram!(
        "petstore_webhook_attempt_duration_seconds",
        metrics::Unit::Seconds,
        "How long each delivery attempt took, to its answer's head or its failure."
    );
    metrics::describe_counter!(
        "petstore_webhook_deliveries_total",
        "Deliveries finished, by outcome: `succeeded`, or `failed` (schedule used up, or its \
         endpoint disabled)."
    );
    metrics::describe_counter!(
        "petstore_webhook_endpoints_disabled_total",
        "Endpoints disabled because every attempt to them failed for too long."
    );
    metrics::describe_counter!(
        "petstore_webhook_leases_lost_total",
        "Attempts whose lease ran out before they were recorded (another instance took the \
         delivery over); their delivery is attempted again."
    );
    metrics::describe_gauge!(
        "petstore_webhook_oldest_pending_seconds",
        metrics::Unit::Seconds,
        "How long the oldest delivery still pending has waited (0 with none): grows while an \
         endpoint is down or deliveries fall behind."
    );
}

/// The running worker; dropping it stops it after the attempts in flight.
pub(crate) struct DeliveryWorker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for DeliveryWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryWorker").finish_non_exhaustive()
    }
}

impl Drop for DeliveryWorker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            if let Err(panic) = thread.join() {
                tracing::error!(?panic, "the webhook delivery worker panicked");
            }
        }
    }
}

/// Starts the worker on a thread of its own.
pub(crate) fn spawn(service: DeliveryService) -> std::io::Result<DeliveryWorker> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    metrics::gauge!("petstore_webhook_oldest_pending_seconds").set(0.0);
    // Series an alert takes `increase()` of exist from the start, so their first rise counts.
    metrics::counter!("petstore_webhook_attempts_total", "result" => "2xx").increment(0);
    metrics::counter!("petstore_webhook_endpoints_disabled_total").increment(0);
    let thread = std::thread::Builder::new()
        .name("petstore-webhooks".into())
        .spawn(move || runtime.block_on(run(&service, &stopped)))?;
    Ok(DeliveryWorker {
        stop,
        thread: Some(thread),
    })
}

async fn run(service: &DeliveryService, stop: &AtomicBool) {
    let settings = service.settings().clone();
    let mut failing = false;
    let mut gauged = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let mut busy = false;
        let outcome = async {
            let fanned = service.fan_out_round().await?;
            busy |= fanned == settings.fan_out_batch;
            let round = service.deliver_round().await?;
            busy |= round.claimed == settings.claim_batch;
            report(&round);
            if gauged.elapsed() >= GAUGE_INTERVAL {
                gauged = Instant::now();
                let oldest = service.oldest_pending().await?;
                metrics::gauge!("petstore_webhook_oldest_pending_seconds")
                    .set(oldest.map_or(0.0, age_seconds));
            }
            Ok::<_, petstore_application::RepositoryError>(())
        }
        .await;
        match outcome {
            Ok(()) if failing => {
                failing = false;
                tracing::info!("webhook deliveries resumed: storage answers again");
            }
            Ok(()) => {}
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(%error, "webhook deliveries paused: storage failed; retrying");
            }
            Err(_) => {}
        }
        if !busy {
            tokio::time::sleep(TICK).await;
        }
    }
}

/// Seconds from `since_ms` (milliseconds since the epoch) to now.
fn age_seconds(since_ms: i64) -> f64 {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    let age = i128::try_from(now_ms).unwrap_or(i128::MAX) - i128::from(since_ms);
    Duration::from_millis(u64::try_from(age.max(0)).unwrap_or(u64::MAX)).as_secs_f64()
}

/// Logs and counts each attempt of a round.
fn report(round: &DeliveryRound) {
    for id in &round.unopenable {
        tracing::error!(
            delivery_id = id.get(),
            "a webhook secret cannot be opened with the configured key secrets (was \
             PETSTORE_KEY_SECRET changed without keeping the old one in \
             PETSTORE_KEY_SECRET_PREVIOUS?); the delivery waits"
        );
    }
    for attempt in &round.attempts {
        report_attempt(attempt);
    }
}

fn report_attempt(report: &AttemptReport) {
    let attempt = &report.attempt;
    let result = attempt.error.map_or("2xx", |error| error.as_str());
    metrics::counter!("petstore_webhook_attempts_total", "result" => result).increment(1);
    metrics::histogram!("petstore_webhook_attempt_duration_seconds")
        .record(f64::from(attempt.latency_ms) / 1000.0);
    if !report.recorded {
        metrics::counter!("petstore_webhook_leases_lost_total").increment(1);
    }
    let outcome = match report.next {
        NextStep::Succeeded => "succeeded",
        NextStep::RetryAt(_) => "retrying",
        NextStep::Failed(_) => "failed",
    };
    if report.recorded && outcome != "retrying" {
        metrics::counter!("petstore_webhook_deliveries_total", "outcome" => outcome).increment(1);
    }
    macro_rules! attempt_line {
        ($level:ident, $message:literal) => {
            tracing::$level!(
                delivery_id = report.delivery.get(),
                endpoint_id = report.endpoint.get(),
                event_id = report.event_id.as_str(),
                attempt = attempt.number,
                host = report.host.as_str(),
                status_code = attempt.status_code,
                latency_ms = attempt.latency_ms,
                outcome,
                error = attempt.error.map(|error| error.as_str()),
                recorded = report.recorded,
                $message
            )
        };
    }
    if attempt.succeeded() {
        attempt_line!(info, "webhook delivered");
    } else {
        attempt_line!(warn, "webhook attempt failed");
    }
    if report.recorded && report.health == EndpointHealth::Disable {
        metrics::counter!("petstore_webhook_endpoints_disabled_total").increment(1);
        tracing::warn!(
            endpoint_id = report.endpoint.get(),
            host = report.host.as_str(),
            "webhook endpoint disabled: every attempt failed for longer than \
             PETSTORE_WEBHOOK_DISABLE_AFTER; its pending deliveries failed (enable it again \
             with PATCH {{\"enabled\": true}})"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_age_is_never_negative() {
        assert_eq!(age_seconds(i64::MAX), 0.0);
        assert!(age_seconds(0) > 1.0e9);
    }
}
