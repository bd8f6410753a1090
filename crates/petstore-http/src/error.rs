//! The spec's `Error` body and the one error type every handler returns.
//!
//! Every failure the HTTP layer can produce becomes an [`ApiError`]: a code from the fixed set in
//! [`ErrorCode`], a message for humans, and any headers the status calls for (`Allow`,
//! `WWW-Authenticate`, `Retry-After`). Its `ResponseError` impl renders exactly
//! `{"code","message","status"}` as `application/json`, so no response of this service is ever
//! actix's plain-text default. A message never shows an invisible or bidirectional character
//! as itself (`shown`).

mod shown;

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use petstore_application::{RepositoryError, StorageFault};
use serde::Serialize;
use utoipa::ToSchema;

/// The machine-readable error codes, one per kind of failure. The set is part of the API
/// (clients switch on it), so adding one is a compatible change and renaming one is not.
/// Serialized in snake case, the same as [`as_str`](Self::as_str). The OpenAPI document says
/// `code` is a string and lists these as its known values ([`error_code_schema`]), not as a
/// closed enum: a client generated from it must keep an error whose code it does not know yet.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::EnumIter, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// 400: the JSON body parsed but a field is missing, unknown or holds an invalid value.
    ValidationFailed,
    /// 400: the body is not JSON, or not a JSON object.
    MalformedJson,
    /// 400: a query or path parameter is invalid.
    InvalidParameter,
    /// 401: the API key is missing, malformed, wrongly signed, expired, revoked or unknown.
    Unauthorized,
    /// 403: the API key is valid but its scope does not allow the operation.
    Forbidden,
    /// 403: a browser's preflight asked for an origin, method or header that cross-origin
    /// requests may not use (CORS).
    CorsRefused,
    /// 404: no such route or no such pet.
    NotFound,
    /// 405: the path exists but not with this method.
    MethodNotAllowed,
    /// 409: the order or its pet is not in a state that allows this (nothing changed).
    Conflict,
    /// 409: the API key already has as many open (`placed`) orders as a key may; one must be
    /// approved or cancelled first (nothing changed).
    TooManyOpenOrders,
    /// 408: the request body did not arrive within the body deadline.
    RequestTimeout,
    /// 410: the operation was removed at its sunset.
    Gone,
    /// 412: `If-Match` names another version than the resource's current one: it changed
    /// since the client read it (nothing changed now).
    PreconditionFailed,
    /// 428: this server requires `If-Match` on changes, and the request has none.
    PreconditionRequired,
    /// 422: the `Idempotency-Key` was used before for another request (method, path or body).
    IdempotencyKeyReused,
    /// 413: the body is larger than the configured limit.
    PayloadTooLarge,
    /// 415: the body is not declared as `application/json`.
    UnsupportedMediaType,
    /// 429: the API key has used up its rate limit for now; `Retry-After` says when to retry.
    RateLimited,
    /// 500: anything unexpected; details go to the log, never to the client.
    InternalError,
    /// 503: storage cannot be reached right now; retrying later may succeed.
    ServiceUnavailable,
}

impl ErrorCode {
    /// The wire spelling (the `code` field).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The HTTP status that always goes with this code.
    pub const fn status(self) -> StatusCode {
        match self {
            Self::ValidationFailed | Self::MalformedJson | Self::InvalidParameter => {
                StatusCode::BAD_REQUEST
            }
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden | Self::CorsRefused => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict | Self::TooManyOpenOrders => StatusCode::CONFLICT,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::Gone => StatusCode::GONE,
            Self::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            Self::PreconditionRequired => StatusCode::PRECONDITION_REQUIRED,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The spec's `Error` schema, exactly its three fields.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Error, description = "Every error response. `status` repeats the HTTP status.", example = json!({
    "code": "validation_failed",
    "message": "`categoryId` must be from 1 to 9223372036854775807 (got 0)",
    "status": 400
}))]
pub(crate) struct ErrorBody<'a> {
    #[schema(schema_with = error_code_schema)]
    code: ErrorCode,
    /// What went wrong, for humans; names the offending field or parameter.
    message: &'a str,
    /// The HTTP status of the response, repeated.
    #[schema(minimum = 400, maximum = 599)]
    status: u16,
}

/// `Error.code` in the OpenAPI document: an open set. A string, with today's codes as
/// `examples` and as `x-extensible-enum` (the convention generators such as openapi-generator
/// read as "these, and maybe others"), so that a generated client keeps an error whose code was
/// added after it was generated.
pub(crate) fn error_code_schema() -> utoipa::openapi::Object {
    use strum::IntoEnumIterator as _;
    use utoipa::openapi::extensions::ExtensionsBuilder;
    use utoipa::openapi::{ObjectBuilder, Type};

    let codes: Vec<&'static str> = ErrorCode::iter().map(ErrorCode::as_str).collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(format!(
            "Machine-readable error code. Known today: {}. Later releases may add codes: \
             handle an unknown one by its HTTP `status`.",
            codes
                .iter()
                .map(|code| format!("`{code}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )))
        .examples(codes.clone())
        .extensions(Some(
            ExtensionsBuilder::new()
                .add("x-extensible-enum", codes)
                .build(),
        ))
        .build()
}

/// The message of every 500: the cause is logged, not shown.
pub const INTERNAL_ERROR_MESSAGE: &str = "internal error";

/// Seconds a client is asked to wait after a 503 (`Retry-After`). Storage outages are usually
/// either brief (pool exhausted) or long (database down); one second keeps well-behaved clients
/// from hammering without making brief ones feel slow.
pub const RETRY_AFTER_SECS: u32 = 1;

/// An error response of the API: what [`ResponseError`] turns into the `Error` body.
#[derive(Debug, Clone)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Why, for the log only (a 500's or 503's cause with its source chain).
    cause: Option<String>,
    /// Whether the connection is closed after this response (`Connection: close`).
    close_connection: bool,
}

/// The cause of an error response, kept in the response's extensions for the request's log
/// line (`app/request_middleware.rs`): errors are logged once, where the request is finished, not where
/// they are built or converted.
#[derive(Debug, Clone)]
pub(crate) struct ErrorCause(pub(crate) String);

impl ApiError {
    /// An error with `message`, in which whatever is invisible or reorders text is escaped
    /// ([`shown::escape_hidden`]): messages quote what clients sent.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if let Cow::Owned(escaped) = shown::escape_hidden(&message) {
            message = escaped;
        }
        Self {
            code,
            message,
            headers: Vec::new(),
            cause: None,
            close_connection: false,
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ValidationFailed, message)
    }

    pub fn malformed_json(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::MalformedJson, message)
    }

    pub fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParameter, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// 405 with the `Allow` header listing `allowed`.
    pub fn method_not_allowed(method: &Method, path: &str, allowed: &[Method]) -> Self {
        let allow = allowed
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        Self::new(
            ErrorCode::MethodNotAllowed,
            format!("method {method} is not allowed on `{path}`; allowed: {allow}"),
        )
        .with_header(header::ALLOW, &allow)
    }

    /// A 408 for a body that did not arrive within `deadline`. The connection is closed: what
    /// is left of the body may still come, and would be read as the next request.
    pub fn body_timeout(deadline: std::time::Duration) -> Self {
        let mut error = Self::new(
            ErrorCode::RequestTimeout,
            format!(
                "the request body did not arrive within {} ms",
                deadline.as_millis()
            ),
        );
        error.close_connection = true;
        error
    }

    /// A 500 whose message says nothing; `cause` (with its whole source chain) goes to the
    /// request's log line.
    pub fn internal(context: &str, cause: &(dyn StdError + 'static)) -> Self {
        let mut error = Self::new(ErrorCode::InternalError, INTERNAL_ERROR_MESSAGE);
        error.cause = Some(format!("{context}: {}", error_chain(cause)));
        error
    }

    /// A 503 with `Retry-After`; `cause` goes to the request's log line.
    pub fn unavailable(message: impl Into<String>, cause: &(dyn StdError + 'static)) -> Self {
        let mut error = Self::new(ErrorCode::ServiceUnavailable, message)
            .with_header(header::RETRY_AFTER, &RETRY_AFTER_SECS.to_string());
        error.cause = Some(error_chain(cause));
        error
    }

    /// Adds a header whose value is already a `HeaderValue`.
    pub fn with_header_value(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Adds a header to the response. Values are built by this crate from fixed text and
    /// numbers; one that is somehow not a valid header value is dropped (and logged) rather than
    /// turning an error response into a panic.
    pub fn with_header(mut self, name: HeaderName, value: &str) -> Self {
        match HeaderValue::from_str(value) {
            Ok(value) => self.headers.push((name, value)),
            Err(_) => tracing::error!(header = %name, "dropped an invalid header value"),
        }
        self
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    pub fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl StdError for ApiError {}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status());
        for (name, value) in &self.headers {
            response.insert_header((name.clone(), value.clone()));
        }
        if self.close_connection {
            response.force_close();
        }
        let mut response = response.json(ErrorBody {
            code: self.code,
            message: &self.message,
            status: self.status().as_u16(),
        });
        if let Some(cause) = &self.cause {
            response.extensions_mut().insert(ErrorCause(cause.clone()));
        }
        response
    }
}

impl From<RepositoryError> for ApiError {
    fn from(err: RepositoryError) -> Self {
        match &err {
            RepositoryError::Unavailable(source) => {
                let message = match source.downcast_ref::<StorageFault>() {
                    Some(StorageFault::Full) => {
                        "storage is full: new data cannot be stored until space is freed; \
                         reads still work; retry later"
                    }
                    Some(StorageFault::ReadOnly) => {
                        "storage is read-only: new data cannot be stored until it is writable \
                         again; reads still work; retry later"
                    }
                    Some(StorageFault::Unreachable) | None => {
                        "storage is temporarily unavailable; retry later"
                    }
                };
                Self::unavailable(message, &err)
            }
            RepositoryError::Unexpected(_) => Self::internal("storage failed", &err),
        }
    }
}

/// `err` and all its sources, `outer: inner: innermost`, for one log field.
pub(crate) fn error_chain(err: &(dyn StdError + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use actix_web::body::to_bytes;
    use strum::IntoEnumIterator as _;

    use super::*;

    async fn body_of(err: &ApiError) -> serde_json::Value {
        let response = err.error_response();
        assert_eq!(
            response.headers().get(header::CONTENT_TYPE).unwrap(),
            "application/json"
        );
        serde_json::from_slice(&to_bytes(response.into_body()).await.unwrap()).unwrap()
    }

    #[actix_web::test]
    async fn every_code_renders_exactly_code_message_status_with_its_status() {
        for code in ErrorCode::iter() {
            let err = ApiError::new(code, "something");
            let body = body_of(&err).await;
            assert_eq!(
                body,
                serde_json::json!({
                    "code": code.as_str(),
                    "message": "something",
                    "status": code.status().as_u16(),
                })
            );
            assert_eq!(err.error_response().status(), code.status());
        }
    }

    #[test]
    fn the_serialized_code_is_its_wire_spelling() {
        for code in ErrorCode::iter() {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }

    #[actix_web::test]
    async fn unexpected_storage_failure_is_a_generic_500() {
        let source = std::io::Error::other("SELECT * FROM pets: disk I/O error at /var/lib/x");
        let err = ApiError::from(RepositoryError::Unexpected(Box::new(source)));
        let body = body_of(&err).await;
        assert_eq!(body["code"], "internal_error");
        assert_eq!(body["message"], INTERNAL_ERROR_MESSAGE);
        assert!(!body.to_string().contains("SELECT"));
    }

    #[actix_web::test]
    async fn a_full_or_read_only_store_says_so_in_its_503() {
        for (fault, says) in [
            (StorageFault::Full, "storage is full"),
            (StorageFault::ReadOnly, "storage is read-only"),
            (StorageFault::Unreachable, "temporarily unavailable"),
        ] {
            let err = ApiError::from(RepositoryError::Unavailable(Box::new(fault)));
            assert_eq!(
                err.error_response().headers().get(header::RETRY_AFTER),
                Some(&HeaderValue::from_static("1"))
            );
            let body = body_of(&err).await;
            assert_eq!(body["code"], "service_unavailable");
            let message = body["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{message}");
        }
    }

    #[actix_web::test]
    async fn unavailable_storage_is_503_with_retry_after() {
        let err = ApiError::from(RepositoryError::Unavailable(Box::new(
            std::io::Error::other("pool timed out"),
        )));
        let response = err.error_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
        assert_eq!(body_of(&err).await["code"], "service_unavailable");
    }

    #[test]
    fn method_not_allowed_lists_the_allowed_methods() {
        let err =
            ApiError::method_not_allowed(&Method::PUT, "/v1/pets", &[Method::GET, Method::POST]);
        let response = err.error_response();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(response.headers().get(header::ALLOW).unwrap(), "GET, POST");
    }
}
