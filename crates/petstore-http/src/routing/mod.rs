//! What every resource builds its routes from: the paths (`paths`) and the public URLs they are
//! served under (`servers`), the route helpers here, and
//! what every route may answer beyond its own statuses (`common_responses`, for the OpenAPI
//! document), and what answers when no route matches: 404 for an unknown path, 405 (with
//! `Allow`) for a known path with another method. None of these needs a key: they only reveal
//! the route table, which the published document shows anyway.

use actix_web::http::Method;
use actix_web::{guard, web, HttpRequest, HttpResponse, Resource, Route};

use crate::error::ApiError;

pub(crate) mod common_responses;
pub mod paths;
pub mod servers;

pub(crate) const GET: &[Method] = &[Method::GET, Method::HEAD];
pub(crate) const GET_POST: &[Method] = &[Method::GET, Method::HEAD, Method::POST];
pub(crate) const POST: &[Method] = &[Method::POST];

/// A route for GET and HEAD: RFC 9110 wants HEAD wherever GET is served (load balancers check
/// health with it). actix-http sends a HEAD's status and headers without the body.
pub(crate) fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// A resource at `path` that answers other methods than `allowed` with 405. `name` is what the
/// metrics' `operation` label is derived from (`metrics::operation`).
pub(crate) fn resource(path: impl AsRef<str>, name: &str, allowed: &'static [Method]) -> Resource {
    web::resource(path.as_ref())
        .name(name)
        .default_service(method_not_allowed(allowed))
}

/// The app's default service: 404.
pub(crate) async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::not_found(format!(
        "no resource at `{}`",
        req.path()
    )))
}

/// The default service of a resource: 405 listing `allowed`.
fn method_not_allowed(allowed: &'static [Method]) -> Route {
    web::to(move |req: HttpRequest| async move {
        Err::<HttpResponse, _>(ApiError::method_not_allowed(
            req.method(),
            req.path(),
            allowed,
        ))
    })
}
