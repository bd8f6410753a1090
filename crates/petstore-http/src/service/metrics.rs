//! `GET /metrics`: the Prometheus text exposition of everything the service counts. No key, and
//! not part of the API's contract (it is not in the OpenAPI document).

use actix_web::http::header::ContentType;
use actix_web::web::Data;
use actix_web::HttpResponse;

use crate::error::ApiError;
use crate::state::HttpState;

/// The exposition's media type (Prometheus text format 0.0.4).
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(crate) async fn metrics(state: Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let Some(exporter) = state.metrics() else {
        return Err(ApiError::not_found("no metrics on this address"));
    };
    Ok(HttpResponse::Ok()
        .insert_header(ContentType(EXPOSITION.parse().expect("a valid media type")))
        .body(exporter.render()))
}
