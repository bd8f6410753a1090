//! The last guard before a response leaves: an error that is not the JSON `Error` body (one
//! actix or a middleware produced, or an error response another part let through) is replaced
//! by the `Error` with the nearest code, and logged so that it gets fixed.

use actix_web::body::BoxBody;
use actix_web::dev::ServiceResponse;
use actix_web::http::{header, StatusCode};
use actix_web::ResponseError;
use strum::IntoEnumIterator as _;

use crate::error::{ApiError, ErrorCode, INTERNAL_ERROR_MESSAGE};
use crate::observability::request_id::RequestId;

/// `err` as our `ApiError`: itself when it is one, else the `Error` for its status.
pub(crate) fn ensure_api_error(err: &actix_web::Error, request_id: &RequestId) -> ApiError {
    match err.as_error::<ApiError>() {
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
    }
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
