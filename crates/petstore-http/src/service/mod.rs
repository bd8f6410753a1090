//! The endpoints about the service rather than a resource of the store, none of which needs a
//! key: health (`/healthz`, `/readyz`), metrics (`/metrics`), the published contract (the
//! OpenAPI documents under `/v1` and Swagger UI at `/docs`), and where to start (`root`: `GET /`
//! and `GET /v1`).

mod docs;
mod health;
mod metrics;
pub(crate) mod root;
mod swagger_ui_files;

use actix_web::http::Method;

pub(crate) use docs::swagger_ui_files;

use crate::routing::paths::{
    DOCS_FILE_PATH, DOCS_PATH, HEALTHZ_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH,
    READYZ_PATH,
};
use crate::routing::table::{Access, Operation, Routes};

/// `GET /healthz` and `GET /readyz`.
pub(crate) static HEALTH: Routes = Routes {
    operations: &[
        Operation {
            id: "healthz",
            method: Method::GET,
            path: HEALTHZ_PATH,
            access: Access::Open,
            handler: |route| route.to(health::healthz),
        },
        Operation {
            id: "readyz",
            method: Method::GET,
            path: READYZ_PATH,
            access: Access::Open,
            handler: |route| route.to(health::readyz),
        },
    ],
    every_response_header: None,
};

/// The published contract: the OpenAPI documents and Swagger UI.
pub(crate) static CONTRACT: Routes = Routes {
    operations: &[
        Operation {
            id: "openapi",
            method: Method::GET,
            path: OPENAPI_PATH,
            access: Access::Open,
            handler: |route| route.to(docs::openapi_json),
        },
        Operation {
            id: "openapi",
            method: Method::GET,
            path: OPENAPI_3_0_PATH,
            access: Access::Open,
            handler: |route| route.to(docs::openapi_3_0_json),
        },
        Operation {
            id: "docs",
            method: Method::GET,
            path: DOCS_PATH,
            access: Access::Open,
            handler: |route| route.to(docs::redirect_to_index),
        },
        Operation {
            id: "docs",
            method: Method::GET,
            path: DOCS_FILE_PATH,
            access: Access::Open,
            handler: |route| route.to(docs::swagger_ui),
        },
    ],
    every_response_header: None,
};

/// `GET /metrics`, served where the state has an exporter.
pub(crate) static METRICS: Routes = Routes {
    operations: &[Operation {
        id: "metrics",
        method: Method::GET,
        path: METRICS_PATH,
        access: Access::Open,
        handler: |route| route.to(metrics::metrics),
    }],
    every_response_header: None,
};
