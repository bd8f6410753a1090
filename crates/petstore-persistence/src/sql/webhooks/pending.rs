//! Failing an endpoint's pending deliveries, when it is disabled by hand or for failing.

use diesel::prelude::*;
use petstore_domain::{DeliveryFailure, DeliveryStatus, EndpointId};

use super::rows::webhook_deliveries as deliveries;
use crate::sql::engine::connection::AnyConnection;

/// Fails every pending delivery of `endpoint` with `failure`; how many. A lease stays as it is:
/// an attempt in progress still settles (`claims.rs`).
pub(super) fn fail_pending(
    conn: &mut AnyConnection,
    endpoint: EndpointId,
    failure: DeliveryFailure,
) -> QueryResult<usize> {
    diesel::update(
        deliveries::table
            .filter(deliveries::endpoint_id.eq(endpoint.get()))
            .filter(deliveries::status.eq(DeliveryStatus::Pending.as_str())),
    )
    .set((
        deliveries::status.eq(DeliveryStatus::Failed.as_str()),
        deliveries::failure.eq(Some(failure.as_str())),
        deliveries::next_attempt_ms.eq(None::<i64>),
    ))
    .execute(conn)
}
