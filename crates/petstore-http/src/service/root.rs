//! Where to start: `GET /` and `GET /v1` (no key) name the API and point to its documentation
//! and its OpenAPI document, in the body and as RFC 8631 `Link`s (`service-doc`,
//! `service-desc`), instead of a bare 404 for whoever tries the address first.

use actix_web::http::{header, Method};
use actix_web::HttpResponse;
use serde::Serialize;

use crate::openapi::{API_TITLE, API_VERSION};
use crate::routing::paths::{BASE_PATH, DOCS_PATH, OPENAPI_PATH, ROOT_PATH};
use crate::routing::table::{Access, Operation, Routes};

/// The body of `GET /` and `GET /v1`.
#[derive(Debug, Serialize)]
struct Start {
    /// The API's name, as its OpenAPI document's `info.title`.
    name: &'static str,
    /// The interface version, as `info.version`.
    version: &'static str,
    /// Swagger UI: the documentation, for people.
    documentation: &'static str,
    /// The OpenAPI 3.1 document, for tools.
    openapi: &'static str,
}

const START: Start = Start {
    name: API_TITLE,
    version: API_VERSION,
    documentation: DOCS_PATH,
    openapi: OPENAPI_PATH,
};

/// Both paths, as the operation `root`.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[
        Operation {
            id: "root",
            method: Method::GET,
            path: ROOT_PATH,
            access: Access::Open,
            handler: |route| route.to(start),
        },
        Operation {
            id: "root",
            method: Method::GET,
            path: BASE_PATH,
            access: Access::Open,
            handler: |route| route.to(start),
        },
    ],
    every_response_header: None,
};

async fn start() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((
            header::LINK,
            format!("<{DOCS_PATH}>; rel=\"service-doc\", <{OPENAPI_PATH}>; rel=\"service-desc\""),
        ))
        .json(&START)
}
