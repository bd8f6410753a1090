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

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::{test, web, App, HttpResponse};
    use serde_json::Value;

    use super::*;

    /// A route behind each of actix's extractors, with this module's configuration, as an
    /// extractor added to the app later would see it.
    async fn call(request: test::TestRequest) -> (StatusCode, Value) {
        let app = test::init_service(
            App::new()
                .app_data(json_config(16))
                .app_data(query_config())
                .app_data(path_config())
                .route(
                    "/json",
                    web::post().to(|_: web::Json<Value>| async { HttpResponse::Ok().finish() }),
                )
                .route(
                    "/query",
                    web::get().to(|_: web::Query<Limit>| async { HttpResponse::Ok().finish() }),
                )
                .route(
                    "/path/{id}",
                    web::get().to(|_: web::Path<u32>| async { HttpResponse::Ok().finish() }),
                ),
        )
        .await;
        let response = test::call_service(&app, request.to_request()).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        (status, test::read_body_json(response).await)
    }

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Limit {
        limit: u8,
    }

    fn assert_error(body: &Value, status: StatusCode, code: &str) {
        assert_eq!(body["code"], code, "{body}");
        assert_eq!(body["status"], status.as_u16(), "{body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }

    #[actix_web::test]
    async fn json_extractor_errors_are_error_bodies() {
        for (content_type, payload, expected, code) in [
            (
                "application/json",
                r#"{"name": "a much longer body"}"#,
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
            ),
            (
                "text/plain",
                "{}",
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            (
                "application/json",
                "{nope",
                StatusCode::BAD_REQUEST,
                "malformed_json",
            ),
        ] {
            let request = test::TestRequest::post()
                .uri("/json")
                .insert_header(("content-type", content_type))
                .set_payload(payload);
            let (status, body) = call(request).await;
            assert_eq!(status, expected, "{content_type} {payload}");
            assert_error(&body, status, code);
        }
    }

    #[actix_web::test]
    async fn query_and_path_extractor_errors_are_invalid_parameter() {
        let (status, body) = call(test::TestRequest::get().uri("/query?limit=999")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_error(&body, status, "invalid_parameter");

        let (status, body) = call(test::TestRequest::get().uri("/path/abc")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_error(&body, status, "invalid_parameter");
    }
}
