//! The drain before a stop: once the instance is shutting down, every answer tells its client
//! to close the connection, so that a balancer's pooled connections leave this instance while
//! it still answers, and none is idle on it when it stops listening.

use actix_web::dev::ServiceResponse;
use actix_web::http::ConnectionType;
use actix_web::web::Data;

use crate::state::HttpState;

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
