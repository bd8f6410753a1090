//! What the HTTP adapter counts, through the `metrics` facade: requests by operation, method and
//! status, their latency, refused keys by reason, rate-limited requests. The composition root
//! installs the Prometheus recorder and hands the app an [`MetricsExporter`] for `GET /metrics`;
//! without a recorder (unit tests) every call here does nothing.
//!
//! Label values are fixed sets (`operation` is the OpenAPI `operationId` from the route table,
//! never the raw path), so the number of series stays bounded whatever clients send. Counter and
//! histogram handles are looked up once per worker thread and label set, not per request.

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::Method;
use actix_web::HttpRequest;
use metrics::{Counter, Histogram};

use crate::routing::table::matched;

/// Requests answered, by `operation`, `method` and `status`.
pub const REQUESTS: &str = "petstore_http_requests_total";
/// Seconds from the request's arrival at the app to its response, by `operation`.
pub const REQUEST_DURATION: &str = "petstore_http_request_duration_seconds";
/// Presented or missing keys refused, by `reason`.
pub const KEY_REFUSALS: &str = "petstore_api_key_refusals_total";
/// Requests refused with 429, by `operation`.
pub const RATE_LIMITED: &str = "petstore_rate_limited_total";
/// Lookups in the key registry for a correctly signed key this instance did not know, by
/// `outcome`: `found`, `unknown` or `failed` (the registry could not be read).
pub const KEY_LOOKUPS: &str = "petstore_api_key_lookups_total";
/// Connections ended because a request head did not arrive within the head timeout.
pub const HEAD_TIMEOUTS: &str = "petstore_http_head_timeouts_total";
/// Connections open now, by `listener` (`api`, `metrics`) and `state` (`admitted`, `refused`).
pub const CONNECTIONS: &str = "petstore_http_connections";
/// Connections refused as they were accepted, by `listener` and `reason` (`per_client`,
/// `bound`): each is answered 429 or 503 at its first request and closed.
pub const CONNECTIONS_REFUSED: &str = "petstore_http_connections_refused_total";
/// Connections the server ended to make room, by `listener` and `state`: `idle` (a keep-alive
/// connection between requests) or `refused` (a refused one that had not sent its request).
pub const CONNECTIONS_ENDED: &str = "petstore_http_connections_ended_total";
/// Requests being answered now.
pub const REQUESTS_IN_FLIGHT: &str = "petstore_http_requests_in_flight";

/// Requests between their arrival at the app and their answer, counted by [`InFlight`] and read
/// at each scrape ([`record_in_flight`]): two atomic additions a request, no gauge lookup.
static IN_FLIGHT: AtomicI64 = AtomicI64::new(0);

/// One request in flight, counted until it is dropped (answered, failed or cancelled).
pub(crate) struct InFlight(());

impl InFlight {
    pub(crate) fn start() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        Self(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sets `petstore_http_requests_in_flight` from the count now (called when metrics are
/// scraped).
pub fn record_in_flight() {
    metrics::gauge!(REQUESTS_IN_FLIGHT).set(IN_FLIGHT.load(Ordering::Relaxed) as f64);
}

/// Gives each family this adapter records its `# HELP` text. Call once the recorder is
/// installed (descriptions go to the recorder there is).
pub fn describe_metrics() {
    metrics::describe_counter!(
        REQUESTS,
        "HTTP requests answered, by operation (the OpenAPI operationId), method and status."
    );
    metrics::describe_histogram!(
        REQUEST_DURATION,
        "Seconds from a request's arrival at the app to its response, by operation."
    );
    metrics::describe_counter!(
        KEY_REFUSALS,
        "API keys refused (missing, invalid, expired, revoked, unknown, not issued, out of scope), by reason."
    );
    metrics::describe_counter!(
        RATE_LIMITED,
        "Requests refused with 429 because their key used up its rate limit, by operation."
    );
    metrics::describe_counter!(
        KEY_LOOKUPS,
        "Registry lookups of correctly signed keys this instance did not know, by outcome."
    );
    metrics::describe_counter!(
        HEAD_TIMEOUTS,
        "Connections closed because a request head did not arrive within the head timeout."
    );
    metrics::describe_gauge!(REQUESTS_IN_FLIGHT, "HTTP requests being answered now.");
    metrics::describe_gauge!(
        CONNECTIONS,
        "Connections open now, by listener and state (admitted, or refused and awaiting its answer)."
    );
    metrics::describe_counter!(
        CONNECTIONS_REFUSED,
        "Connections refused when accepted, by listener and reason (per_client, bound); each is answered 429 or 503."
    );
    metrics::describe_counter!(
        CONNECTIONS_ENDED,
        "Connections ended to make room, by listener and state (idle keep-alive, refused before its request)."
    );
}

/// Renders the exposition text for `GET /metrics`.
#[derive(Clone)]
pub struct MetricsExporter(Arc<dyn Fn() -> String + Send + Sync>);

impl MetricsExporter {
    pub fn new(render: impl Fn() -> String + Send + Sync + 'static) -> Self {
        Self(Arc::new(render))
    }

    pub(crate) fn render(&self) -> String {
        (self.0)()
    }
}

impl fmt::Debug for MetricsExporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsExporter").finish_non_exhaustive()
    }
}

/// Why a key was refused: the `reason` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Refusal {
    Missing,
    OtherScheme,
    SeveralHeaders,
    InvalidToken,
    Expired,
    Revoked,
    Unknown,
    NotIssued,
    Scope,
}

impl Refusal {
    fn label(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::OtherScheme => "other_scheme",
            Self::SeveralHeaders => "several_headers",
            Self::InvalidToken => "invalid_token",
            Self::Expired => "expired",
            Self::Revoked => "revoked",
            Self::Unknown => "unknown_key",
            Self::NotIssued => "not_issued",
            Self::Scope => "insufficient_scope",
        }
    }
}

/// One label set's handles.
struct Series {
    operation: &'static str,
    method: &'static str,
    status: u16,
    requests: Counter,
    duration: Histogram,
}

thread_local! {
    /// A worker sees a few dozen label sets; a short list scanned beats hashing the labels.
    static REQUEST_SERIES: RefCell<Vec<Series>> = const { RefCell::new(Vec::new()) };
}

/// Counts one answered request and records its latency.
pub(crate) fn record_request(
    operation: &'static str,
    method: &Method,
    status: u16,
    took: Duration,
) {
    let method = method_label(method);
    REQUEST_SERIES.with(|series| {
        let mut series = series.borrow_mut();
        let found = series.iter().position(|known| {
            known.status == status && known.operation == operation && known.method == method
        });
        let index = found.unwrap_or_else(|| {
            series.push(Series {
                operation,
                method,
                status,
                requests: metrics::counter!(
                    REQUESTS,
                    "operation" => operation,
                    "method" => method,
                    "status" => status.to_string()
                ),
                duration: metrics::histogram!(REQUEST_DURATION, "operation" => operation),
            });
            series.len() - 1
        });
        let series = &series[index];
        series.requests.increment(1);
        series.duration.record(took.as_secs_f64());
    });
}

/// Counts a refused key.
pub(crate) fn key_refused(reason: Refusal) {
    metrics::counter!(KEY_REFUSALS, "reason" => reason.label()).increment(1);
}

/// Counts a lookup of a key this instance did not know.
pub(crate) fn key_looked_up(outcome: &'static str) {
    metrics::counter!(KEY_LOOKUPS, "outcome" => outcome).increment(1);
}

/// Counts a request refused by the rate limiter.
pub(crate) fn rate_limited(operation: &'static str) {
    metrics::counter!(RATE_LIMITED, "operation" => operation).increment(1);
}

/// The operation the request was routed to, as the route table names it (the OpenAPI
/// `operationId`, or the name of a service endpoint), or `not_found`: the `operation` label of
/// the metrics and the log line. A fixed set, whatever the path.
pub(crate) fn operation(req: &HttpRequest) -> &'static str {
    matched(req).map_or(NOT_FOUND, |operation| operation.id)
}

/// The `operation` of a request no route matched.
pub(crate) const NOT_FOUND: &str = "not_found";

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::OPTIONS => "OPTIONS",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}
