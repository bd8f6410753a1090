//! An endpoint's deliveries as the API manages them: a ping added, the listing and a delivery
//! with its attempts, a retry.

use diesel::prelude::*;
use petstore_application::webhooks::{DeliveryQuery, NewDelivery};
use petstore_application::{RepositoryError, WebhookError};
use petstore_domain::{Delivery, DeliveryId, DeliveryStatus, EndpointId};

use super::endpoint_lookup::{existing, find_on};
use super::rows::{
    webhook_attempts as attempts, webhook_deliveries as deliveries, AttemptRow, DeliveryRow,
    ATTEMPT_COLUMNS, DELIVERY_COLUMNS,
};
use crate::sql::engine::connection::AnyConnection;
use crate::sql::idempotency::recorded_write::Stop;

/// Deliveries as read, with the attempts of all of them.
pub(super) type Found = (Vec<DeliveryRow>, Vec<AttemptRow>);

/// The deliveries of `found`, in its order, each with its attempts (oldest first).
pub(super) fn assemble((rows, attempt_rows): Found) -> Result<Vec<Delivery>, RepositoryError> {
    let mut attempts_of: std::collections::HashMap<i64, Vec<_>> = std::collections::HashMap::new();
    for row in attempt_rows {
        attempts_of
            .entry(row.delivery_id)
            .or_default()
            .push(row.into_attempt()?);
    }
    rows.into_iter()
        .map(|row| {
            let attempts = attempts_of.remove(&row.id).unwrap_or_default();
            row.into_delivery(attempts)
        })
        .collect()
}

/// The attempts of the deliveries `ids`, by delivery and oldest first.
fn attempts_of(conn: &mut AnyConnection, ids: Vec<i64>) -> QueryResult<Vec<AttemptRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    attempts::table
        .filter(attempts::delivery_id.eq_any(ids))
        .select(ATTEMPT_COLUMNS)
        .order((attempts::delivery_id, attempts::number))
        .load::<AttemptRow>(conn)
}

/// The deliveries of `query`; `None` when no endpoint has its id.
pub(super) fn list(conn: &mut AnyConnection, query: &DeliveryQuery) -> QueryResult<Option<Found>> {
    if find_on(conn, query.endpoint)?.is_none() {
        return Ok(None);
    }
    let mut select = deliveries::table
        .filter(deliveries::endpoint_id.eq(query.endpoint.get()))
        .select(DELIVERY_COLUMNS)
        .order(deliveries::id.desc())
        .limit(i64::try_from(query.max).unwrap_or(i64::MAX))
        .into_boxed();
    if let Some(before) = query.before {
        select = select.filter(deliveries::id.lt(before.get()));
    }
    if let Some(status) = query.status {
        select = select.filter(deliveries::status.eq(status.as_str()));
    }
    let rows = select.load::<DeliveryRow>(conn)?;
    let attempts = attempts_of(conn, rows.iter().map(|row| row.id).collect())?;
    Ok(Some((rows, attempts)))
}

/// The delivery `id` of `endpoint`, with its attempts (no rows when there is none).
pub(super) fn find(
    conn: &mut AnyConnection,
    endpoint: EndpointId,
    id: DeliveryId,
) -> QueryResult<Found> {
    let rows = deliveries::table
        .filter(deliveries::id.eq(id.get()))
        .filter(deliveries::endpoint_id.eq(endpoint.get()))
        .select(DELIVERY_COLUMNS)
        .load::<DeliveryRow>(conn)?;
    let attempts = attempts_of(conn, rows.iter().map(|row| row.id).collect())?;
    Ok((rows, attempts))
}

fn found_one(found: Found) -> Result<Delivery, Stop<WebhookError>> {
    assemble(found)
        .map_err(|error| Stop::Failed(WebhookError::Repository(error)))?
        .pop()
        .ok_or_else(|| {
            Stop::Failed(WebhookError::Repository(RepositoryError::Unexpected(
                "a delivery written in this transaction cannot be read back".into(),
            )))
        })
}

/// Adds a pending delivery due now, refused when the endpoint is missing or disabled.
pub(super) fn add(
    conn: &mut AnyConnection,
    delivery: &NewDelivery,
) -> Result<Delivery, Stop<WebhookError>> {
    let endpoint = existing(conn, delivery.endpoint)?;
    if !endpoint.is_enabled() {
        return Err(Stop::Refused(WebhookError::EndpointDisabled(endpoint.id)));
    }
    let insert = diesel::insert_into(deliveries::table)
        .values((
            deliveries::endpoint_id.eq(endpoint.id.get()),
            deliveries::event_id.eq(delivery.event_id.as_str()),
            deliveries::event_type.eq(delivery.event_type.as_str()),
            deliveries::body.eq(delivery.body.as_slice()),
            deliveries::status.eq(DeliveryStatus::Pending.as_str()),
            deliveries::next_attempt_ms.eq(Some(delivery.now_ms)),
            deliveries::created_at_ms.eq(delivery.now_ms),
        ))
        .returning(DELIVERY_COLUMNS);
    let row = match conn {
        AnyConnection::Postgresql(pg) => insert.get_result::<DeliveryRow>(pg),
        AnyConnection::Sqlite(sqlite) => insert.get_result::<DeliveryRow>(sqlite),
    }?;
    found_one((vec![row], Vec::new()))
}

/// Makes the delivery pending and due at `now_ms`, unless an attempt of it holds a live lease.
pub(super) fn retry(
    conn: &mut AnyConnection,
    endpoint: EndpointId,
    id: DeliveryId,
    now_ms: i64,
) -> Result<Delivery, Stop<WebhookError>> {
    let current = existing(conn, endpoint)?;
    if !current.is_enabled() {
        return Err(Stop::Refused(WebhookError::EndpointDisabled(endpoint)));
    }
    let of_endpoint = deliveries::id
        .eq(id.get())
        .and(deliveries::endpoint_id.eq(endpoint.get()));
    // One conditional statement: on PostgreSQL it waits for a claim of the row in progress and
    // then sees its lease.
    let retried = diesel::update(
        deliveries::table.filter(of_endpoint).filter(
            deliveries::lease_until_ms
                .is_null()
                .or(deliveries::lease_until_ms.le(now_ms)),
        ),
    )
    .set((
        deliveries::status.eq(DeliveryStatus::Pending.as_str()),
        deliveries::failure.eq(None::<&str>),
        deliveries::next_attempt_ms.eq(Some(now_ms)),
        deliveries::lease_owner.eq(None::<&str>),
        deliveries::lease_until_ms.eq(None::<i64>),
    ))
    .execute(conn)?;
    if retried == 0 {
        let exists: i64 = deliveries::table
            .filter(of_endpoint)
            .count()
            .get_result(conn)?;
        return Err(Stop::Refused(if exists > 0 {
            WebhookError::InFlight(id)
        } else {
            WebhookError::DeliveryNotFound {
                endpoint,
                delivery: id,
            }
        }));
    }
    found_one(find(conn, endpoint, id)?)
}
