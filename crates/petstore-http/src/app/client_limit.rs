//! The middleware of the per-client-address rate limit (`security/client_limit.rs` says who
//! counts as a client and what takes from its bucket): anonymous requests are counted before
//! they are served, requests to the API once their key was refused.
//!
//! A client over its limit gets its 429 after [`TARPIT`]: a 429 costs the service as much as
//! the cheapest answer, so a flood answered at once would take the workers from everyone
//! else. Held for a second, each of the flood's connections gets one answer a second; the timer
//! costs nothing while it waits.

use std::rc::Rc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::{HttpMessage, HttpRequest};

use crate::error::{ApiError, ErrorCode};
use crate::routing::table::KeyedPaths;
use crate::security::auth::KeyClaims;
use crate::security::rate_limit::{Decision, RateLimitHeaders, RATE_LIMIT, RATE_LIMIT_POLICY};
use crate::state::HttpState;

/// How long a client over its limit waits for its 429.
pub(crate) const TARPIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The middleware: anonymous requests are counted before they are served (a flood of them
/// is turned away before it costs anything more), requests to the `keyed` paths once their key
/// was refused (the 401 becomes a 429 when the address's bucket is empty).
pub(crate) async fn limit_by_client(
    keyed: Rc<KeyedPaths>,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let state = req.app_data::<Data<HttpState>>().cloned();
    let Some((state, limiter)) = state
        .as_ref()
        .and_then(|state| Some((state, state.client_rate_limiter()?)))
    else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    };
    // Only what is counted needs its client's address: requests with a key never do.
    let bucket = |req: &HttpRequest| {
        state
            .client_address(req)
            .map_or_else(|| "unknown".to_owned(), |address| address.to_string())
    };
    if !keyed.contain(req.path()) {
        return match limiter.check(&bucket(req.request())) {
            Decision::Allowed(headers) => {
                req.extensions_mut().insert(headers);
                next.call(req)
                    .await
                    .map(ServiceResponse::map_into_boxed_body)
            }
            Decision::Limited {
                headers,
                retry_after_secs,
            } => Ok(turned_away(req.into_parts().0, &headers, retry_after_secs).await),
        };
    }
    let response = next.call(req).await?.map_into_boxed_body();
    let keyless = response.request().extensions().get::<KeyClaims>().is_none();
    if !(keyless && response.status() == StatusCode::UNAUTHORIZED) {
        return Ok(response);
    }
    Ok(match limiter.check(&bucket(response.request())) {
        Decision::Allowed(headers) => {
            response.request().extensions_mut().insert(headers);
            response
        }
        Decision::Limited {
            headers,
            retry_after_secs,
        } => turned_away(response.into_parts().0, &headers, retry_after_secs).await,
    })
}

/// The 429 of a client over its limit, after [`TARPIT`].
async fn turned_away(
    req: HttpRequest,
    headers: &RateLimitHeaders,
    retry_after_secs: u64,
) -> ServiceResponse<BoxBody> {
    actix_web::rt::time::sleep(TARPIT).await;
    ServiceResponse::new(req, too_many(headers, retry_after_secs))
}

fn too_many(headers: &RateLimitHeaders, retry_after_secs: u64) -> actix_web::HttpResponse {
    actix_web::ResponseError::error_response(
        &ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "too many requests without a valid API key from this address; retry in \
                 {retry_after_secs} s"
            ),
        )
        .with_header(header::RETRY_AFTER, &retry_after_secs.to_string())
        .with_header_value(RATE_LIMIT_POLICY, headers.policy.clone())
        .with_header_value(RATE_LIMIT, headers.state.clone()),
    )
}
