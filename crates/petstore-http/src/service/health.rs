//! Health endpoints for orchestrators and load balancers, outside `/v1` and without a key:
//! `/healthz` says the process answers, `/readyz` that it can also reach storage and that its
//! view of the key registry is current.

use std::time::Duration;

use actix_web::web::Data;
use actix_web::HttpResponse;
use petstore_application::{RepositoryError, StorageFault};
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

/// How long the key registry may go unread before the instance reports itself not ready: it
/// keeps honouring the keys it knew, but would miss a revocation made since.
pub const KEY_REGISTRY_STALE_AFTER: Duration = Duration::from_secs(5);

/// How long `/readyz` waits for a stale key registry to be read again before it answers.
const CATCH_UP_WAIT: Duration = Duration::from_millis(500);

/// Why a stopping instance is not ready, for the log.
#[derive(Debug, thiserror::Error)]
#[error("shutting down")]
struct ShuttingDown;

/// Why the key view counts as stale, for the log.
#[derive(Debug, thiserror::Error)]
#[error("the key registry was last read {0:?} ago")]
struct StaleKeys(Duration);

/// 200 `{"status":"ready"}` when storage answers (for SQL stores: when the adapter's probe
/// knows of no fault, so a call costs no database round trip) and the key registry was read within
/// [`KEY_REGISTRY_STALE_AFTER`], else 503 `service_unavailable`. Any storage failure counts as
/// "not ready", whether the repository called it unavailable or unexpected.
pub(crate) async fn readyz(state: Data<HttpState>) -> Result<HttpResponse, ApiError> {
    // A stopping instance is still finishing requests in flight; no new ones should come.
    if state.is_shutting_down() {
        return Err(ApiError::unavailable(
            "the instance is shutting down",
            &ShuttingDown,
        ));
    }
    if let Err(err) = state.check_storage().await {
        let message = match &err {
            RepositoryError::Unavailable(source) => match source.downcast_ref::<StorageFault>() {
                Some(StorageFault::Full) => "storage is full; writes are refused",
                Some(StorageFault::ReadOnly) => "storage is read-only; writes are refused",
                Some(StorageFault::Unreachable) | None => "storage is not reachable",
            },
            RepositoryError::Unexpected(_) => "storage is not reachable",
        };
        return Err(ApiError::unavailable(message, &err));
    }
    let mut stale_for = state.key_directory().stale_for();
    if stale_for > KEY_REGISTRY_STALE_AFTER {
        // Storage answers (checked above), yet the registry was last read before or during a
        // fault: read it now rather than report "not ready" until the refresher's next turn,
        // which would take an instance that serves requests out of rotation for nothing.
        let directory = state.key_directory().clone();
        let span = tracing::Span::current();
        let read = actix_web::web::block(move || span.in_scope(|| directory.catch_up()));
        let _ = actix_web::rt::time::timeout(CATCH_UP_WAIT, read).await;
        stale_for = state.key_directory().stale_for();
    }
    if stale_for > KEY_REGISTRY_STALE_AFTER {
        return Err(ApiError::unavailable(
            "the key registry is not being read; revocations may be missed",
            &StaleKeys(stale_for),
        ));
    }
    Ok(HttpResponse::Ok().json(Health { status: "ready" }))
}
