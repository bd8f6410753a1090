//! The refusals of a key, with their RFC 6750 challenges: every one is the spec's JSON `Error`.

use actix_web::http::header;
use petstore_domain::KeyScope;

use crate::error::{ApiError, ErrorCode};

/// The `realm` of the `WWW-Authenticate` challenge on every 401.
pub const REALM: &str = "petstore";

/// The one answer to every presented key that is refused, whatever check it failed (malformed,
/// forged, expired, revoked, never issued): telling them apart would help only an attacker.
pub(super) fn invalid_token() -> ApiError {
    unauthorized("invalid or expired API key", true)
}

/// A 403 for a valid key whose scope does not cover the operation (RFC 6750 3.1
/// `insufficient_scope`, naming the scope needed).
pub(crate) fn insufficient_scope(needed: KeyScope) -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        format!("this API key may not do this: it needs the `{needed}` scope"),
    )
    .with_header(
        header::WWW_AUTHENTICATE,
        &format!("Bearer realm=\"{REALM}\", error=\"insufficient_scope\", scope=\"{needed}\""),
    )
}

/// A 401 for a request that is not a well-formed bearer request (RFC 6750 3.1
/// `invalid_request`; the status stays 401 like every refused key here).
pub(super) fn malformed_request(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message).with_header(
        header::WWW_AUTHENTICATE,
        &format!("Bearer realm=\"{REALM}\", error=\"invalid_request\""),
    )
}

/// A 401 with the RFC 6750 challenge; `error="invalid_token"` only when a token was presented.
pub(super) fn unauthorized(message: &str, token_presented: bool) -> ApiError {
    let challenge = if token_presented {
        format!("Bearer realm=\"{REALM}\", error=\"invalid_token\"")
    } else {
        format!("Bearer realm=\"{REALM}\"")
    };
    ApiError::new(ErrorCode::Unauthorized, message)
        .with_header(header::WWW_AUTHENTICATE, &challenge)
}
