//! The endpoints about the service rather than a resource of the store, none of which needs a
//! key: health (`/healthz`, `/readyz`), metrics (`/metrics`), the published contract (the
//! OpenAPI documents under `/v1` and Swagger UI at `/docs`), and where to start (`root`: `GET /`
//! and `GET /v1`).

mod docs;
mod health;
mod metrics;
pub(crate) mod root;
mod swagger_ui_files;

use actix_web::web::ServiceConfig;

pub(crate) use docs::swagger_ui_files;

use crate::routing::paths::{
    DOCS_PATH, HEALTHZ_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH, READYZ_PATH,
};
use crate::routing::{get, resource, GET};

/// Health and the contract; `/metrics` too when `with_metrics` (the state has an exporter for
/// this port).
pub(crate) fn routes(config: &mut ServiceConfig, with_metrics: bool) {
    health_routes(config);
    config
        .service(resource(OPENAPI_PATH, "openapi", GET).route(get().to(docs::openapi_json)))
        .service(resource(OPENAPI_3_0_PATH, "openapi", GET).route(get().to(docs::openapi_3_0_json)))
        .service(resource(DOCS_PATH, "docs", GET).route(get().to(docs::redirect_to_index)))
        .service(
            resource(format!("{DOCS_PATH}/{{file:.*}}"), "docs_file", GET)
                .route(get().to(docs::swagger_ui)),
        );
    if with_metrics {
        metrics_routes(config);
    }
}

/// `GET /healthz` and `GET /readyz`.
pub(crate) fn health_routes(config: &mut ServiceConfig) {
    config
        .service(resource(HEALTHZ_PATH, "healthz", GET).route(get().to(health::healthz)))
        .service(resource(READYZ_PATH, "readyz", GET).route(get().to(health::readyz)));
}

/// `GET /metrics` alone.
pub(crate) fn metrics_routes(config: &mut ServiceConfig) {
    config.service(resource(METRICS_PATH, "metrics", GET).route(get().to(metrics::metrics)));
}
