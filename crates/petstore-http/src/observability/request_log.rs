//! Each request's one log line and metrics record. A 500 is an error to look into; another 5xx
//! (storage away or busy) a warning; everything else an info line.
//!
//! The line is written here rather than by `tracing-actix-web`, whose `TracingLogger` (a span
//! with a dozen fields and a UUID per request) cost a third of getPet's throughput when measured
//! (`docs/benchmarks.md` has the figures); this keeps to a line and two metric handles found in
//! a short per-thread list.

use std::borrow::Cow;
use std::time::Instant;

use actix_web::http::{Method, StatusCode};

use crate::observability::metrics;
use crate::observability::request_id::RequestId;

/// What one request's log line and metrics record say about it.
pub(crate) struct Outcome<'a> {
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    pub(crate) request_id: &'a RequestId,
    pub(crate) operation: &'static str,
    pub(crate) status: StatusCode,
    pub(crate) started: Instant,
    pub(crate) key_id: Option<&'a str>,
    pub(crate) cause: Option<&'a str>,
}

/// Most bytes of a path a log line holds: a route's paths are short, and a client must not be
/// able to write kilobytes into the log with one request (actix-http accepts heads up to 128 KiB).
const LOGGED_PATH_MAX: usize = 256;

/// `path` as logged: whole up to [`LOGGED_PATH_MAX`] bytes, else its start (cut at a character
/// boundary) and a mark saying how much was left out.
fn logged_path(path: &str) -> Cow<'_, str> {
    if path.len() <= LOGGED_PATH_MAX {
        return Cow::Borrowed(path);
    }
    let mut cut = LOGGED_PATH_MAX;
    while !path.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!(
        "{}...[{} more bytes not logged]",
        &path[..cut],
        path.len() - cut
    ))
}

/// The request's log line and metrics record. The line holds method, path (without the query),
/// status, latency, the request id, the operation, the id (`jti`) of the API key when one was
/// accepted (never the token), and for a 5xx its cause. A 500 is an error to look into; a 503
/// (storage away or busy) a warning.
pub(crate) fn record(outcome: &Outcome<'_>) {
    let took = outcome.started.elapsed();
    metrics::record_request(
        outcome.operation,
        outcome.method,
        outcome.status.as_u16(),
        took,
    );
    // Whole microseconds: an integer field costs a fraction of formatting a `Duration`.
    let latency_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let method = outcome.method.as_str();
    let path = logged_path(outcome.path);
    let path = path.as_ref();
    let status = outcome.status.as_u16();
    let request_id = outcome.request_id.as_str();
    let operation = outcome.operation;
    let key_id = outcome.key_id;
    let cause = outcome.cause;
    match status {
        500 => tracing::error!(
            method, path, status, latency_us, request_id, operation, key_id, cause, "request"
        ),
        501.. => tracing::warn!(
            method, path, status, latency_us, request_id, operation, key_id, cause, "request"
        ),
        _ => tracing::info!(
            method, path, status, latency_us, request_id, operation, key_id, "request"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{logged_path, LOGGED_PATH_MAX};

    #[test]
    fn a_long_path_is_cut_and_says_so() {
        assert_eq!(logged_path("/v1/pets/7"), "/v1/pets/7");
        let long = format!("/v1/{}", "a".repeat(128 * 1024));
        let logged = logged_path(&long);
        assert!(logged.len() < LOGGED_PATH_MAX + 50, "{}", logged.len());
        assert!(logged.starts_with("/v1/aaa"));
        assert!(
            logged.ends_with(&format!(
                "...[{} more bytes not logged]",
                long.len() - LOGGED_PATH_MAX
            )),
            "{logged}"
        );
        // Never cut inside a character.
        let wide = format!("/{}", "é".repeat(200));
        assert!(logged_path(&wide).contains("more bytes not logged"));
    }
}
