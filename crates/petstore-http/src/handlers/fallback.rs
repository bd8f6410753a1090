//! What answers when no operation matches: 404 for unknown paths, 405 (with `Allow`) for a
//! known path with another method. Neither needs a key: they only reveal the route table,
//! which the published spec shows anyway.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse, Route};

use crate::error::ApiError;

pub(crate) async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::not_found(format!(
        "no resource at `{}`",
        req.path()
    )))
}

/// The default service of a resource: 405 listing `allowed`.
pub(crate) fn method_not_allowed(allowed: &'static [Method]) -> Route {
    web::to(move |req: HttpRequest| async move {
        Err::<HttpResponse, _>(ApiError::method_not_allowed(
            req.method(),
            req.path(),
            allowed,
        ))
    })
}
