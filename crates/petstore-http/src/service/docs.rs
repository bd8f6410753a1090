//! The published contract, without a key: `GET /v1/openapi.json` (the OpenAPI document) and
//! `GET /docs` (Swagger UI reading it).
//!
//! Swagger UI's files are compiled into the binary (`utoipa-swagger-ui` with its `vendored`
//! feature unpacks the release shipped in the `utoipa-swagger-ui-vendored` crate at build time),
//! so the page works on a closed network: nothing is fetched from a CDN or anywhere else. They
//! are kept in memory, gzip-encoded once, for the whole process ([`SwaggerUiFiles`]).

use std::sync::{Arc, LazyLock};

use actix_web::http::header::{self, CacheControl, CacheDirective, ContentType};
use actix_web::web::{Bytes, Data};
use actix_web::{HttpRequest, HttpResponse};
use utoipa_swagger_ui::Config;

use super::swagger_ui_files::SwaggerUiFiles;
use crate::error::ApiError;
use crate::openapi::{document_json, document_json_3_0};
use crate::routing::paths::{DOCS_PATH, OPENAPI_PATH};
use crate::routing::servers::ApiServers;
use crate::state::{HttpState, RenderedDocuments};

/// Both documents for `servers`: a few milliseconds, so done once per process (see
/// `HttpState::documents`), on the first request for either.
fn render(servers: &ApiServers) -> RenderedDocuments {
    RenderedDocuments {
        v3_1: Bytes::from(document_json(servers)),
        v3_0: Bytes::from(document_json_3_0(servers)),
    }
}

/// Swagger UI's files, one set for the process: each worker's app shares them, so each file is
/// read and compressed once, not once per worker.
pub(crate) fn swagger_ui_files() -> Arc<SwaggerUiFiles> {
    static FILES: LazyLock<Arc<SwaggerUiFiles>> =
        LazyLock::new(|| Arc::new(SwaggerUiFiles::new(swagger_ui_config())));
    Arc::clone(&FILES)
}

/// Swagger UI's settings (they end up in its `swagger-initializer.js`).
pub(crate) fn swagger_ui_config() -> Arc<Config<'static>> {
    Arc::new(
        Config::from(OPENAPI_PATH)
            // The default validator badge loads an image from validator.swagger.io.
            .validator_url("none")
            .display_operation_id(true)
            .display_request_duration(true)
            .show_common_extensions(true),
    )
}

/// The OpenAPI 3.1 document.
pub(crate) async fn openapi_json(state: Data<HttpState>) -> HttpResponse {
    document_response(&state.documents(render).v3_1)
}

/// The same document in OpenAPI 3.0.3.
pub(crate) async fn openapi_3_0_json(state: Data<HttpState>) -> HttpResponse {
    document_response(&state.documents(render).v3_0)
}

fn document_response(document: &Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(document.clone())
}

/// `/docs` to `/docs/`: Swagger UI's page loads its files relative to itself, which only
/// resolves under the directory form.
pub(crate) async fn redirect_to_index() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, format!("{DOCS_PATH}/")))
        .finish()
}

/// The documentation page may load scripts, styles, images and data from this service only
/// (Swagger UI draws its icons as `data:` images and sets inline styles), and may not be framed.
const DOCS_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    frame-ancestors 'none'";

/// A file of Swagger UI: `index.html` for `/docs/`, else the named file; 404 (JSON) for any
/// other name.
pub(crate) async fn swagger_ui(
    req: HttpRequest,
    files: Data<SwaggerUiFiles>,
) -> Result<HttpResponse, ApiError> {
    let name = req.match_info().get("file").unwrap_or_default();
    match files.file(name) {
        Ok(Some(file)) => {
            let mut response = file.response(req.headers()).await;
            response.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                header::HeaderValue::from_static(DOCS_CSP),
            );
            Ok(response)
        }
        Ok(None) => Err(ApiError::not_found(format!(
            "no resource at `{}`",
            req.path()
        ))),
        Err(err) => Err(ApiError::internal(
            "could not render Swagger UI",
            err.as_ref(),
        )),
    }
}
