//! The drain before a stop: once the instance is shutting down, every answer tells its client
//! to close the connection, so that a balancer's pooled connections leave this instance while
//! it still answers, and none is idle on it when it stops listening; and the count of
//! connections not answered yet, which the stop waits for before it closes the listener (a
//! graceful stop closes a connection whose request has not started).

use std::sync::Arc;

use actix_web::dev::ServiceResponse;
use actix_web::http::ConnectionType;
use actix_web::web::Data;

use super::ledger::ConnectionLedger;
use crate::state::HttpState;

/// The connections of one listener, as its stop sees them.
#[derive(Debug, Clone)]
pub struct Connections(Arc<ConnectionLedger>);

impl Connections {
    pub(crate) fn new(ledger: Arc<ConnectionLedger>) -> Self {
        Self(ledger)
    }

    /// Connections that have not sent their request yet, or whose request is being served.
    pub fn unanswered(&self) -> usize {
        self.0.unanswered()
    }
}

/// Marks `response` `Connection: close` while the instance drains.
pub(crate) fn close_connection_when_draining<B>(response: &mut ServiceResponse<B>) {
    let draining = response
        .request()
        .app_data::<Data<HttpState>>()
        .is_some_and(|state| state.is_shutting_down());
    if draining {
        response
            .response_mut()
            .head_mut()
            .set_connection_type(ConnectionType::Close);
    }
}
