//! Error handlers for actix's own extractors (`web::Json`, `web::Query`, `web::Path`).
//!
//! The handlers of this crate parse bodies, queries and paths themselves, but any extractor
//! added later must still answer with the `Error` body, never actix's plain-text default; these
//! configurations, registered app-wide, make sure of it.

use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::web::{JsonConfig, PathConfig, QueryConfig};
use actix_web::HttpRequest;

use crate::error::{ApiError, ErrorCode};

pub(crate) fn json_config(limit: usize) -> JsonConfig {
    JsonConfig::default()
        .limit(limit)
        .content_type(|mime| {
            mime.type_() == actix_web::mime::APPLICATION
                && mime.subtype() == actix_web::mime::JSON
                && mime.suffix().is_none()
        })
        .error_handler(|err, _req: &HttpRequest| json_error(&err).into())
}

fn json_error(err: &JsonPayloadError) -> ApiError {
    match err {
        JsonPayloadError::OverflowKnownLength { limit, .. }
        | JsonPayloadError::Overflow { limit } => ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("request body must be at most {limit} bytes"),
        ),
        JsonPayloadError::ContentType => ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send `Content-Type: application/json`",
        ),
        JsonPayloadError::Deserialize(err) => {
            ApiError::malformed_json(format!("request body is not valid JSON: {err}"))
        }
        JsonPayloadError::Payload(err) => {
            ApiError::malformed_json(format!("could not read the request body: {err}"))
        }
        other => ApiError::internal("JSON extractor failed", other),
    }
}

pub(crate) fn query_config() -> QueryConfig {
    QueryConfig::default().error_handler(|err: QueryPayloadError, _req: &HttpRequest| {
        ApiError::invalid_parameter(format!("invalid query parameter: {err}")).into()
    })
}

pub(crate) fn path_config() -> PathConfig {
    PathConfig::default().error_handler(|err: PathError, _req: &HttpRequest| {
        ApiError::invalid_parameter(format!("invalid path parameter: {err}")).into()
    })
}
