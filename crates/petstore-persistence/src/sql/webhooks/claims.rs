//! Leasing due deliveries to one instance, and settling an attempt under its lease.
//!
//! A claim leases each row until `now + lease` and increments its `lease_token`; a settlement
//! changes the row only while the token is still the one it was claimed with and the lease not
//! ended, so an attempt whose lease ran out and was taken over records nothing.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use petstore_application::webhooks::{EndpointHealth, NextStep, Settlement};
use petstore_domain::{DeliveryFailure, DeliveryStatus, DisabledReason, EndpointId};

use super::pending::fail_pending;
use super::rows::{
    webhook_attempts as attempts, webhook_deliveries as deliveries, webhook_endpoints as endpoints,
    ClaimRow,
};
use crate::sql::engine::connection::AnyConnection;

/// What PostgreSQL leases in one statement: the due rows no other transaction holds (`SKIP
/// LOCKED`), with their endpoints' columns. Rows another instance leased and committed since
/// are checked again on their newest version and left out.
const CLAIM_POSTGRES: &str = "UPDATE webhook_deliveries AS d \
    SET lease_owner = $1, lease_until_ms = $2, lease_token = d.lease_token + 1 \
    FROM (SELECT due.id, e.url, e.secret_sealed, e.previous_secret_sealed, \
            e.previous_secret_expires_ms, e.failing_since_ms \
          FROM webhook_deliveries AS due JOIN webhook_endpoints AS e ON e.id = due.endpoint_id \
          WHERE due.status = 'pending' AND e.disabled_reason IS NULL \
            AND due.next_attempt_ms <= $3 \
            AND (due.lease_until_ms IS NULL OR due.lease_until_ms <= $3) \
          ORDER BY due.next_attempt_ms, due.id LIMIT $4 \
          FOR UPDATE OF due SKIP LOCKED) AS claimed \
    WHERE d.id = claimed.id \
    RETURNING d.id, d.endpoint_id, d.event_id, d.body, d.attempts_made, d.lease_token, \
        d.lease_until_ms, d.next_attempt_ms, claimed.url, claimed.secret_sealed, \
        claimed.previous_secret_sealed, claimed.previous_secret_expires_ms, \
        claimed.failing_since_ms";

/// The same on SQLite, whose one writer claims alone; `RETURNING` may name only the updated
/// table, so the endpoint's columns come from subqueries.
const CLAIM_SQLITE: &str = "UPDATE webhook_deliveries \
    SET lease_owner = ?, lease_until_ms = ?, lease_token = lease_token + 1 \
    WHERE id IN (SELECT due.id FROM webhook_deliveries AS due \
          JOIN webhook_endpoints AS e ON e.id = due.endpoint_id \
          WHERE due.status = 'pending' AND e.disabled_reason IS NULL \
            AND due.next_attempt_ms <= ? \
            AND (due.lease_until_ms IS NULL OR due.lease_until_ms <= ?) \
          ORDER BY due.next_attempt_ms, due.id LIMIT ?) \
    RETURNING id, endpoint_id, event_id, body, attempts_made, lease_token, lease_until_ms, \
        next_attempt_ms, \
        (SELECT e.url FROM webhook_endpoints AS e \
            WHERE e.id = webhook_deliveries.endpoint_id) AS url, \
        (SELECT e.secret_sealed FROM webhook_endpoints AS e \
            WHERE e.id = webhook_deliveries.endpoint_id) AS secret_sealed, \
        (SELECT e.previous_secret_sealed FROM webhook_endpoints AS e \
            WHERE e.id = webhook_deliveries.endpoint_id) AS previous_secret_sealed, \
        (SELECT e.previous_secret_expires_ms FROM webhook_endpoints AS e \
            WHERE e.id = webhook_deliveries.endpoint_id) AS previous_secret_expires_ms, \
        (SELECT e.failing_since_ms FROM webhook_endpoints AS e \
            WHERE e.id = webhook_deliveries.endpoint_id) AS failing_since_ms";

/// Leases at most `max` due deliveries to `owner` until `lease_until_ms`, oldest due first.
pub(super) fn claim(
    conn: &mut AnyConnection,
    owner: &str,
    now_ms: i64,
    lease_until_ms: i64,
    max: i64,
) -> QueryResult<Vec<ClaimRow>> {
    let mut rows = match conn {
        AnyConnection::Postgresql(pg) => diesel::sql_query(CLAIM_POSTGRES)
            .bind::<Text, _>(owner)
            .bind::<BigInt, _>(lease_until_ms)
            .bind::<BigInt, _>(now_ms)
            .bind::<BigInt, _>(max)
            .load::<ClaimRow>(pg)?,
        AnyConnection::Sqlite(sqlite) => diesel::sql_query(CLAIM_SQLITE)
            .bind::<Text, _>(owner)
            .bind::<BigInt, _>(lease_until_ms)
            .bind::<BigInt, _>(now_ms)
            .bind::<BigInt, _>(now_ms)
            .bind::<BigInt, _>(max)
            .load::<ClaimRow>(sqlite)?,
    };
    // `RETURNING` keeps no order.
    rows.sort_by_key(|row| (row.next_attempt_ms, row.id()));
    Ok(rows)
}

/// Records `settlement` if its lease still holds; `false`, changing nothing, if not.
pub(super) fn settle(conn: &mut AnyConnection, settlement: &Settlement) -> QueryResult<bool> {
    let (status, failure, next_attempt_ms) = match settlement.next {
        NextStep::Succeeded => (DeliveryStatus::Succeeded, None, None),
        NextStep::RetryAt(at) => (DeliveryStatus::Pending, None, Some(at)),
        NextStep::Failed(failure) => (DeliveryStatus::Failed, Some(failure.as_str()), None),
    };
    let attempt = &settlement.attempt;
    let number = i32::try_from(attempt.number).unwrap_or(i32::MAX);
    let settled = diesel::update(
        deliveries::table
            .filter(deliveries::id.eq(settlement.delivery.get()))
            .filter(deliveries::lease_token.eq(settlement.lease_token))
            .filter(deliveries::lease_until_ms.is_not_null()),
    )
    .set((
        deliveries::status.eq(status.as_str()),
        deliveries::failure.eq(failure),
        deliveries::attempts_made.eq(number),
        deliveries::next_attempt_ms.eq(next_attempt_ms),
        deliveries::lease_owner.eq(None::<&str>),
        deliveries::lease_until_ms.eq(None::<i64>),
    ))
    .execute(conn)?;
    if settled == 0 {
        return Ok(false);
    }
    diesel::insert_into(attempts::table)
        .values((
            attempts::delivery_id.eq(settlement.delivery.get()),
            attempts::number.eq(number),
            attempts::at_ms.eq(attempt.at_ms),
            attempts::status_code.eq(attempt.status_code.map(i32::from)),
            attempts::latency_ms.eq(i64::from(attempt.latency_ms)),
            attempts::error.eq(attempt.error.map(|error| error.as_str())),
        ))
        .execute(conn)?;
    record_health(conn, settlement.endpoint, settlement.health, attempt.at_ms)?;
    if next_attempt_ms.is_some() {
        fail_if_disabled(conn, settlement)?;
    }
    Ok(true)
}

/// The endpoint's record after an attempt; each statement changes the row only when its state
/// changes, so most attempts write nothing here.
fn record_health(
    conn: &mut AnyConnection,
    endpoint: EndpointId,
    health: EndpointHealth,
    at_ms: i64,
) -> QueryResult<()> {
    let row = endpoints::table.find(endpoint.get());
    match health {
        EndpointHealth::Answering => {
            diesel::update(row.filter(endpoints::failing_since_ms.is_not_null()))
                .set(endpoints::failing_since_ms.eq(None::<i64>))
                .execute(conn)?;
        }
        EndpointHealth::Failing { since_ms } => {
            diesel::update(row.filter(endpoints::failing_since_ms.is_null()))
                .set(endpoints::failing_since_ms.eq(Some(since_ms)))
                .execute(conn)?;
        }
        EndpointHealth::Disable => {
            diesel::update(row.filter(endpoints::disabled_reason.is_null()))
                .set((
                    endpoints::disabled_reason.eq(Some(DisabledReason::Failing.as_str())),
                    endpoints::updated_at_ms.eq(at_ms),
                ))
                .execute(conn)?;
            fail_pending(conn, endpoint, DeliveryFailure::EndpointDisabled)?;
        }
    }
    Ok(())
}

/// A delivery scheduled again while its endpoint was disabled during the attempt fails as the
/// endpoint's other pending deliveries did.
fn fail_if_disabled(conn: &mut AnyConnection, settlement: &Settlement) -> QueryResult<()> {
    let disabled: i64 = endpoints::table
        .find(settlement.endpoint.get())
        .filter(endpoints::disabled_reason.is_not_null())
        .count()
        .get_result(conn)?;
    if disabled > 0 {
        diesel::update(deliveries::table.find(settlement.delivery.get()))
            .set((
                deliveries::status.eq(DeliveryStatus::Failed.as_str()),
                deliveries::failure.eq(Some(DeliveryFailure::EndpointDisabled.as_str())),
                deliveries::next_attempt_ms.eq(None::<i64>),
            ))
            .execute(conn)?;
    }
    Ok(())
}
