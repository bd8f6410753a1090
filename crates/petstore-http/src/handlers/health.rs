//! Health endpoints for orchestrators and load balancers, outside `/v1` and without a key:
//! `/healthz` says the process answers, `/readyz` that it can also reach storage.

use actix_web::web::Data;
use actix_web::HttpResponse;
use serde::Serialize;

use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Serialize)]
struct Health {
    status: &'static str,
}

/// Always 200 `{"status":"ok"}`: touches nothing, so a slow database never fails liveness
/// (which would get healthy processes restarted).
pub(crate) async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// 200 `{"status":"ready"}` when storage answers, else 503 `service_unavailable`. Any storage
/// failure counts as "not ready", whether the repository called it unavailable or unexpected.
pub(crate) async fn readyz(state: Data<HttpState>) -> Result<HttpResponse, ApiError> {
    match state.service().check_storage().await {
        Ok(()) => Ok(HttpResponse::Ok().json(Health { status: "ready" })),
        Err(err) => Err(ApiError::unavailable("storage is not reachable", &err)),
    }
}
