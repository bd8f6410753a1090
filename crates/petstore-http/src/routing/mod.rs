//! What every resource builds its routes from: the paths (`paths`) and the public URLs they are
//! served under (`servers`), the route table each resource declares its operations in (`table`),
//! what every route may answer beyond its own statuses (`common_responses`, for the OpenAPI
//! document), and what answers when no route matches: 404 for an unknown path (here), 405 (with
//! `Allow`) for a known path with another method (`table`). None of these needs a key: they only reveal
//! the route table, which the published document shows anyway.

use actix_web::{guard, web, HttpRequest, HttpResponse, Route};

use crate::error::ApiError;

pub(crate) mod common_responses;
pub(crate) mod experimental;
pub mod paths;
pub mod servers;
pub(crate) mod table;

/// A route for GET and HEAD: RFC 9110 wants HEAD wherever GET is served (load balancers check
/// health with it). actix-http sends a HEAD's status and headers without the body.
pub(crate) fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// The app's default service: 404.
pub(crate) async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::not_found(format!(
        "no resource at `{}`",
        req.path()
    )))
}
