//! The middleware around the whole app: one log line per request, panics turned into a 500,
//! and a last check that no error response leaves without the JSON `Error` body.
//!
//! The log line is written here rather than by `tracing-actix-web`: measured on this project's
//! machine, its `TracingLogger` (a span with a dozen fields and a UUID per request) took getPet
//! on the memory backend from about 145,000 to 92,000 requests/s, while this line costs about
//! 6 % of a request (`docs/benchmarks.md`), and the panic and JSON guards would stay here anyway.

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

use crate::auth::KeyClaims;
use crate::error::{ApiError, ErrorCause, ErrorCode, INTERNAL_ERROR_MESSAGE};

/// Wraps every request: writes its one log line, turns a panic into a 500, and makes sure no
/// error leaves without the JSON `Error` body.
pub(crate) async fn log_and_contain_failures(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    // Copied out because the inner service consumes `req`. (Keeping a clone of the
    // `HttpRequest` instead is not an option: routing needs to be its only owner.)
    let method = req.method().clone();
    let path = req.path().to_owned();

    match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(Ok(response)) => {
            let mut response = ensure_json_error(response.map_into_boxed_body());
            let key = response
                .request()
                .extensions()
                .get::<KeyClaims>()
                .map(|claims| claims.sub.clone());
            // What a key holder was shown must not be kept by a shared or browser cache.
            if key.is_some() && !response.headers().contains_key(header::CACHE_CONTROL) {
                response.headers_mut().insert(
                    header::CACHE_CONTROL,
                    header::HeaderValue::from_static("no-store"),
                );
            }
            let cause = response
                .response()
                .extensions()
                .get::<ErrorCause>()
                .map(|cause| cause.0.clone());
            log_request(
                &method,
                &path,
                response.status(),
                started,
                key.as_deref(),
                cause.as_deref(),
            );
            Ok(response)
        }
        // Handlers turn their errors into responses themselves; an `Err` here comes from
        // a middleware or actix. The server renders it with `error_response`, so it must be
        // one of ours.
        Ok(Err(err)) => {
            let err = ensure_api_error(err);
            log_request(
                &method,
                &path,
                err.as_response_error().status_code(),
                started,
                None,
                None,
            );
            Err(err)
        }
        Err(panic) => {
            tracing::error!(panic = panic_message(&*panic), "request handler panicked");
            let err = ApiError::new(ErrorCode::InternalError, INTERNAL_ERROR_MESSAGE);
            log_request(&method, &path, err.status(), started, None, None);
            Err(err.into())
        }
    }
}

/// The one line per request: method, path (without the query), status, latency, the name of
/// the API key when one was accepted, and for a 5xx its cause. A 500 is an error to look into;
/// a 503 (storage away or busy) a warning.
fn log_request(
    method: &Method,
    path: &str,
    status: StatusCode,
    started: Instant,
    key: Option<&str>,
    cause: Option<&str>,
) {
    // Whole microseconds: an integer field costs a fraction of formatting a `Duration`.
    let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let method = method.as_str();
    let status = status.as_u16();
    match status {
        500 => tracing::error!(method, path, status, latency_us, key, cause, "request"),
        501.. => tracing::warn!(method, path, status, latency_us, key, cause, "request"),
        _ => tracing::info!(method, path, status, latency_us, key, "request"),
    }
}

fn ensure_api_error(err: actix_web::Error) -> actix_web::Error {
    if err.as_error::<ApiError>().is_some() {
        return err;
    }
    let status = err.as_response_error().status_code();
    tracing::error!(status = status.as_u16(), error = %err, "replaced a non-JSON error");
    fallback_error(status).into()
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
