//! One module per group of operations. Every `/v1` handler starts with [`authorize`], so the
//! caller is known before anything about the request (path, query, body) is looked at.

pub(crate) mod docs;
pub(crate) mod fallback;
pub(crate) mod get_pet;
pub(crate) mod health;
pub(crate) mod metrics;
pub(crate) mod orders;
pub(crate) mod pets;

use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest};
use petstore_domain::KeyScope;

use crate::auth::authenticate;
use crate::error::{ApiError, ErrorCode};

use crate::rate_limit::{Decision, RATE_LIMIT, RATE_LIMIT_POLICY};
use crate::state::HttpState;

/// Authenticates the request, checks that the key's scope allows `needed` and that the key is
/// within its rate limit, and keeps the key's claims (for the request's log line) and its
/// rate-limit headers (for the response) in the request's extensions. `operation` is the
/// OpenAPI `operationId`, for the metrics.
fn authorize(
    req: &HttpRequest,
    state: &HttpState,
    needed: KeyScope,
    operation: &'static str,
) -> Result<(), ApiError> {
    let claims = authenticate(req, state.keys(), state.key_directory(), needed)?;
    let decision = state
        .rate_limiter()
        .map(|limiter| limiter.check(&claims.jti));
    req.extensions_mut().insert(claims);
    match decision {
        None => Ok(()),
        Some(Decision::Allowed(headers)) => {
            req.extensions_mut().insert(headers);
            Ok(())
        }
        Some(Decision::Limited {
            headers,
            retry_after_secs,
        }) => {
            crate::metrics::rate_limited(operation);
            Err(ApiError::new(
                ErrorCode::RateLimited,
                format!("this API key has used up its rate limit; retry in {retry_after_secs} s"),
            )
            .with_header(header::RETRY_AFTER, &retry_after_secs.to_string())
            .with_header_value(RATE_LIMIT_POLICY, headers.policy)
            .with_header_value(RATE_LIMIT, headers.state))
        }
    }
}
