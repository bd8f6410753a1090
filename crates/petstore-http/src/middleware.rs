//! The middleware around the whole app: the request id (`X-Request-Id`, on the request's log
//! line, and a debug-level span that puts it on every debug line logged meanwhile), one log line
//! and one metrics record per request, the headers every response carries (security, rate
//! limit, caching), panics turned into a 500, and a last check that no error response leaves
//! without the JSON `Error` body.
//!
//! The span is at debug level because at info (the default) the only lines a request produces
//! are written here, each with the id as a field; an info-level span cost about a tenth of
//! getPet's throughput for nothing.
//!
//! The log line is written here rather than by `tracing-actix-web`: measured on this project's
//! machine, its `TracingLogger` (a span with a dozen fields and a UUID per request) took getPet
//! on the memory backend from about 145,000 to 92,000 requests/s, while this middleware keeps
//! to a line and two metric handles found in a short per-thread list (`docs/benchmarks.md`),
//! and the panic and JSON guards would stay here anyway.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, ResponseError};
use futures_util::FutureExt as _;
use strum::IntoEnumIterator as _;
use tracing::Instrument as _;

use crate::auth::KeyClaims;
use crate::error::{ApiError, ErrorCause, ErrorCode, INTERNAL_ERROR_MESSAGE};
use crate::metrics;
use crate::rate_limit::{RateLimitHeaders, RATE_LIMIT, RATE_LIMIT_POLICY};
use crate::request_id::{RequestId, REQUEST_ID};

/// What one request's log line and metrics record say about it.
struct Outcome<'a> {
    method: &'a Method,
    path: &'a str,
    request_id: &'a RequestId,
    operation: &'static str,
    status: StatusCode,
    started: Instant,
    key_id: Option<&'a str>,
    cause: Option<&'a str>,
}

/// Wraps every request: gives it its id, writes its one log line and metrics record, adds the
/// per-response headers, turns a panic into a 500, and makes sure no error leaves without the
/// JSON `Error` body.
pub(crate) async fn log_and_contain_failures(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    // Copied out because the inner service consumes `req`. (Keeping a clone of the
    // `HttpRequest` instead is not an option: routing needs to be its only owner.)
    let method = req.method().clone();
    let path = req.path().to_owned();
    let request_id = RequestId::for_request(req.headers());
    let span = tracing::debug_span!("request", request_id = request_id.as_str());

    let outcome = AssertUnwindSafe(next.call(req))
        .catch_unwind()
        .instrument(span)
        .await;
    let outcome_of = |status, operation, key_id, cause| Outcome {
        method: &method,
        path: &path,
        request_id: &request_id,
        operation,
        status,
        started,
        key_id,
        cause,
    };
    match outcome {
        Ok(Ok(response)) => {
            let mut response = ensure_json_error(response.map_into_boxed_body());
            let operation = if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                "method_not_allowed"
            } else {
                metrics::operation(response.request())
            };
            let (key_id, rate_limit) = {
                let extensions = response.request().extensions();
                (
                    extensions
                        .get::<KeyClaims>()
                        .map(|claims| claims.jti.clone()),
                    extensions.get::<RateLimitHeaders>().cloned(),
                )
            };
            let headers = response.headers_mut();
            headers.insert(REQUEST_ID, request_id.header_value().clone());
            insert_security_headers(headers);
            // What a key holder was shown must not be kept by a shared or browser cache.
            if key_id.is_some() && !headers.contains_key(header::CACHE_CONTROL) {
                headers.insert(
                    header::CACHE_CONTROL,
                    header::HeaderValue::from_static("no-store"),
                );
            }
            if let Some(rate_limit) = rate_limit {
                headers.insert(RATE_LIMIT_POLICY, rate_limit.policy);
                headers.insert(RATE_LIMIT, rate_limit.state);
            }
            let cause = response
                .response()
                .extensions()
                .get::<ErrorCause>()
                .map(|cause| cause.0.clone());
            record(&outcome_of(
                response.status(),
                operation,
                key_id.as_deref(),
                cause.as_deref(),
            ));
            Ok(response)
        }
        // Handlers turn their errors into responses themselves; an `Err` here comes from
        // a middleware or actix. The server renders it with `error_response`, so it must be
        // one of ours.
        Ok(Err(err)) => {
            let err = ensure_api_error(err, &request_id);
            let status = err.as_response_error().status_code();
            record(&outcome_of(status, "unrouted", None, None));
            Err(err)
        }
        Err(panic) => {
            tracing::error!(
                request_id = request_id.as_str(),
                panic = panic_message(&*panic),
                "request handler panicked"
            );
            let err = with_every_response_header(
                ApiError::new(ErrorCode::InternalError, INTERNAL_ERROR_MESSAGE),
                &request_id,
            );
            record(&outcome_of(err.status(), "unrouted", None, None));
            Err(err.into())
        }
    }
}

/// The request's log line and metrics record. The line holds method, path (without the query),
/// status, latency, the request id, the operation, the id (`jti`) of the API key when one was
/// accepted (never the token), and for a 5xx its cause. A 500 is an error to look into; a 503
/// (storage away or busy) a warning.
fn record(outcome: &Outcome<'_>) {
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
    let path = outcome.path;
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

fn ensure_api_error(err: actix_web::Error, request_id: &RequestId) -> actix_web::Error {
    let error = match err.as_error::<ApiError>() {
        Some(error) => error.clone(),
        None => {
            let status = err.as_response_error().status_code();
            tracing::error!(
                request_id = request_id.as_str(),
                status = status.as_u16(),
                error = %err,
                "replaced a non-JSON error"
            );
            fallback_error(status)
        }
    };
    with_every_response_header(error, request_id).into()
}

/// On every response: browsers must not guess content types or leak our URLs onwards.
const SECURITY_HEADERS: [(header::HeaderName, &str); 2] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

fn insert_security_headers(headers: &mut header::HeaderMap) {
    for (name, value) in SECURITY_HEADERS {
        if !headers.contains_key(&name) {
            headers.insert(name, header::HeaderValue::from_static(value));
        }
    }
}

/// `error` with the headers every response carries, for the answers rendered after this
/// middleware (a panic's, another middleware's error).
fn with_every_response_header(error: ApiError, request_id: &RequestId) -> ApiError {
    SECURITY_HEADERS.into_iter().fold(
        error.with_header_value(REQUEST_ID, request_id.header_value().clone()),
        |error, (name, value)| {
            error.with_header_value(name, header::HeaderValue::from_static(value))
        },
    )
}

fn fallback_error(status: StatusCode) -> ApiError {
    match code_for(status) {
        Some(code) => ApiError::new(code, reason(status)),
        None => ApiError::new(ErrorCode::InternalError, INTERNAL_ERROR_MESSAGE),
    }
}

/// Rewrites an error response that is not `application/json` into the `Error` body. Every
/// handler already answers in JSON; this catches whatever a future change or actix itself
/// might let through, and logs it so it gets fixed.
pub(crate) fn ensure_json_error(response: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }

    tracing::error!(
        status = status.as_u16(),
        path = response.request().path(),
        "replaced a non-JSON error response"
    );
    let error = fallback_error(status);
    let (request, original) = response.into_parts();
    let mut replacement = error.error_response();
    for (name, value) in original.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            replacement
                .headers_mut()
                .append(name.clone(), value.clone());
        }
    }
    ServiceResponse::new(request, replacement)
}

/// The code for a status produced outside our handlers. A 400 from there is about the request
/// line or headers, hence `invalid_parameter`; statuses without a code of their own are
/// reported as the internal error they are.
fn code_for(status: StatusCode) -> Option<ErrorCode> {
    if status == StatusCode::BAD_REQUEST {
        return Some(ErrorCode::InvalidParameter);
    }
    ErrorCode::iter()
        .find(|code| code.status() == status && status != StatusCode::INTERNAL_SERVER_ERROR)
}

fn reason(status: StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("error")
        .to_ascii_lowercase()
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)")
}
