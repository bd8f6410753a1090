//! The answer of a connection the ledger refused (`ledger.rs`): its first request gets the
//! `Error` at once, without the request's work, and the connection is closed after it.
//!
//! - over its address's share of connections: 429 `rate_limited`;
//! - at the bound with no idle connection to close: 503 `service_unavailable`;
//!
//! both with `Retry-After: 1` and `Connection: close`. `/healthz` and `/readyz` are served as
//! always (and the connection closed after them), so that a probe tells the truth about an
//! instance that is only full.
//!
//! A middleware of the app, inside the one that logs and finishes every response: a refused
//! request has its request id, its log line and its metrics like any other.

use std::future::{ready, Ready};

use actix_web::body::EitherBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::{header, ConnectionType};
use actix_web::ResponseError as _;
use futures_util::future::{Either, MapOk, TryFutureExt as _};

use super::ledger::Refusal;
use crate::error::{ApiError, ErrorCode, RETRY_AFTER_SECS};
use crate::routing::paths::{HEALTHZ_PATH, READYZ_PATH};

/// Answers the requests of refused connections (see the module's documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct AnswerRefused;

impl<S, B> Transform<S, ServiceRequest> for AnswerRefused
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Transform = AnswerRefusedService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, ()>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(AnswerRefusedService { service }))
    }
}

pub struct AnswerRefusedService<S> {
    service: S,
}

type Served<B> = fn(ServiceResponse<B>) -> ServiceResponse<EitherBody<B>>;

impl<S, B> Service<ServiceRequest> for AnswerRefusedService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = actix_web::Error;
    type Future = Either<
        MapOk<S::Future, Served<B>>,
        Ready<Result<ServiceResponse<EitherBody<B>>, actix_web::Error>>,
    >;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let Some(refusal) = req.conn_data::<Refusal>().copied() else {
            return Either::Left(
                self.service
                    .call(req)
                    .map_ok(ServiceResponse::map_into_left_body as Served<B>),
            );
        };
        if matches!(req.path(), HEALTHZ_PATH | READYZ_PATH) {
            return Either::Left(self.service.call(req).map_ok(close_after as Served<B>));
        }
        let mut response = refused(refusal).error_response();
        response
            .head_mut()
            .set_connection_type(ConnectionType::Close);
        Either::Right(ready(Ok(req.into_response(response).map_into_right_body())))
    }
}

/// A probe's answer on a refused connection, which closes after it.
fn close_after<B>(mut response: ServiceResponse<B>) -> ServiceResponse<EitherBody<B>> {
    response
        .response_mut()
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    response.map_into_left_body()
}

/// The error a refused connection's request gets.
fn refused(refusal: Refusal) -> ApiError {
    let retry_after = RETRY_AFTER_SECS.to_string();
    let error = match refusal {
        Refusal::PerClient { bound } => ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "this address already has {bound} connections open, as many as one address \
                 may: send requests over those, or retry after {retry_after} s"
            ),
        ),
        Refusal::Full => ApiError::new(
            ErrorCode::ServiceUnavailable,
            format!(
                "the instance is serving as many connections as it may and none is idle; retry \
                 after {retry_after} s"
            ),
        ),
    };
    error.with_header(header::RETRY_AFTER, &retry_after)
}
