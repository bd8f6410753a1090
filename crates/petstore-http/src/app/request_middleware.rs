//! The middleware around the whole app: gives each request its id (`X-Request-Id`, on its log
//! line) and its trace (W3C Trace Context), writes its log line and metrics record, adds the
//! headers every response carries (security, rate limit, caching), gzips large bodies for the
//! clients that ask, closes connections while the instance drains, turns a panic into a 500, and
//! lets no error leave without the JSON `Error` body. Each job's rules live with the part they
//! belong to; this module puts them in order.
//!
//! Each request runs in an info-level `request` span with its request id and trace: every line
//! logged while it is handled, on this thread or on a storage thread working for it, carries
//! them. It is cheap enough for info level because the log's filter takes no lock per span and
//! the span's fields are written without serde.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::HttpMessage;
use futures_util::FutureExt as _;
use tracing::Instrument as _;

use crate::error::{ApiError, ErrorCause, ErrorCode, INTERNAL_ERROR_MESSAGE};
use crate::observability::metrics;
use crate::observability::request_id::{RequestId, REQUEST_ID};
use crate::observability::request_log::{record, Outcome};
use crate::observability::trace_context::TraceContext;
use crate::routing::table::matched;
use crate::security::auth::{KeyClaims, PresentedKeyId};
use crate::security::headers::{insert_security_headers, SECURITY_HEADERS};
use crate::security::rate_limit::{RateLimitHeaders, RATE_LIMIT, RATE_LIMIT_POLICY};
use crate::server::drain::close_connection_when_draining;
use crate::state::HttpState;
use crate::wire::compression;
use crate::wire::error_body::{ensure_api_error, ensure_json_error};

/// Wraps every request: gives it its id, writes its one log line and metrics record, adds the
/// per-response headers, turns a panic into a 500, and makes sure no error leaves without the
/// JSON `Error` body.
pub(crate) async fn log_and_contain_failures(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let _in_flight = metrics::InFlight::start();
    // Copied out because the inner service consumes `req`. (Keeping a clone of the
    // `HttpRequest` instead is not an option: routing needs to be its only owner.)
    let method = req.method().clone();
    let path = req.path().to_owned();
    let request_id = RequestId::for_request(req.headers());
    let trace = TraceContext::for_request(req.headers());
    let span = tracing::info_span!(
        "request",
        request_id = request_id.as_str(),
        trace_id = trace.trace_id.hex().as_str(),
        span_id = trace.span_id.hex().as_str(),
    );
    let client = req
        .app_data::<Data<HttpState>>()
        .and_then(|state| state.client_address(req.request()));
    let user_agent = req.headers().get(header::USER_AGENT).cloned();
    let accepts_gzip = compression::accepts_gzip(req.headers());

    let outcome = AssertUnwindSafe(next.call(req))
        .catch_unwind()
        .instrument(span)
        .await;
    let outcome_of = |status, operation, route, key_id, presented_key_id, cause| Outcome {
        method: &method,
        path: &path,
        request_id: &request_id,
        operation,
        route,
        status,
        started,
        key_id,
        presented_key_id,
        cause,
        client,
        user_agent: user_agent.as_ref(),
        trace,
    };
    match outcome {
        Ok(Ok(response)) => {
            let mut response = compression::compress(
                ensure_json_error(response.map_into_boxed_body()),
                accepts_gzip,
            )
            .await;
            let (operation, route) = if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                ("method_not_allowed", None)
            } else {
                matched(response.request()).map_or((metrics::NOT_FOUND, None), |operation| {
                    (operation.id, Some(operation.path))
                })
            };
            let (key_id, presented_key_id, rate_limit) = {
                let extensions = response.request().extensions();
                (
                    extensions
                        .get::<KeyClaims>()
                        .map(|claims| claims.jti.clone()),
                    extensions
                        .get::<PresentedKeyId>()
                        .map(|presented| presented.0.clone()),
                    extensions.get::<RateLimitHeaders>().cloned(),
                )
            };
            close_connection_when_draining(&mut response);
            let headers = response.headers_mut();
            headers.insert(REQUEST_ID, request_id.header_value().clone());
            insert_security_headers(headers);
            // What a key holder was shown stays out of shared caches; a read may be kept by
            // its own client, which revalidates it (`If-None-Match`) before each use.
            if key_id.is_some() && !headers.contains_key(header::CACHE_CONTROL) {
                let directives = if method == Method::GET || method == Method::HEAD {
                    "private, no-cache"
                } else {
                    "no-store"
                };
                headers.insert(
                    header::CACHE_CONTROL,
                    header::HeaderValue::from_static(directives),
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
                route,
                key_id.as_deref(),
                presented_key_id.as_deref(),
                cause.as_deref(),
            ));
            Ok(response)
        }
        // Handlers turn their errors into responses themselves; an `Err` here comes from
        // a middleware or actix. The server renders it with `error_response`, so it must be
        // one of ours.
        Ok(Err(err)) => {
            let err: actix_web::Error =
                with_every_response_header(ensure_api_error(&err, &request_id), &request_id).into();
            let status = err.as_response_error().status_code();
            record(&outcome_of(status, "unrouted", None, None, None, None));
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
            record(&outcome_of(
                err.status(),
                "unrouted",
                None,
                None,
                None,
                None,
            ));
            Err(err.into())
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

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)")
}
