//! `DieselDeliveryQueue`: the queue the delivery worker takes its work from. The fan-out moves
//! the stored feed position by compare-and-set and adds each event's deliveries in the same
//! transaction, so two instances reading the same events add them once; claims and settlements
//! are in `claims.rs`.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Text};
use petstore_application::webhooks::{ClaimedDelivery, FannedEvent, Settlement};
use petstore_application::{DeliveryQueue, RepositoryError};
use petstore_domain::{DeliveryStatus, EventTypes, FeedPosition};

use super::claims;
use super::rows::{
    type_bit, webhook_deliveries as deliveries, webhook_endpoints, webhook_fanout as fanout,
    FanoutRow,
};
use super::{in_dialect, WebhookStore};
use crate::sql::engine::connection::AnyConnection;

/// Each event's delivery to every enabled endpoint that takes its type and was created at or
/// before it; one already there (the same event and endpoint) is kept.
const ADD_DELIVERIES: &str = "INSERT INTO webhook_deliveries \
    (endpoint_id, event_id, event_type, body, status, attempts_made, next_attempt_ms, \
     lease_token, created_at_ms) \
    SELECT id, ?, ?, ?, 'pending', 0, ?, 0, ? FROM webhook_endpoints \
    WHERE disabled_reason IS NULL AND (event_types & ?) <> 0 AND created_at_ms <= ? \
    ON CONFLICT (endpoint_id, event_id) DO NOTHING";

/// The oldest finished deliveries, at most a bound of them; their attempts go with them.
const PURGE_FINISHED: &str = "DELETE FROM webhook_deliveries WHERE id IN \
    (SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at_ms < ? \
     ORDER BY id LIMIT ?)";

/// The delivery queue in the database behind a pool.
#[derive(Debug, Clone)]
pub struct DieselDeliveryQueue {
    store: WebhookStore,
}

impl DieselDeliveryQueue {
    pub(crate) fn new(store: WebhookStore) -> Self {
        Self { store }
    }
}

/// Moves the position from `from` to `to`; `false` when it is no longer `from`.
fn move_position(
    conn: &mut AnyConnection,
    from: Option<FeedPosition>,
    to: FeedPosition,
) -> QueryResult<bool> {
    let moved = match from {
        None => diesel::sql_query(in_dialect(
            conn,
            "INSERT INTO webhook_fanout (singleton, commit_position, sequence) \
             VALUES (1, ?, ?) ON CONFLICT (singleton) DO NOTHING",
        ))
        .bind::<BigInt, _>(to.commit)
        .bind::<BigInt, _>(to.sequence)
        .execute(conn)?,
        Some(from) => diesel::update(
            fanout::table
                .filter(fanout::commit_position.eq(from.commit))
                .filter(fanout::sequence.eq(from.sequence)),
        )
        .set((
            fanout::commit_position.eq(to.commit),
            fanout::sequence.eq(to.sequence),
        ))
        .execute(conn)?,
    };
    Ok(moved > 0)
}

fn fan_out_on(
    conn: &mut AnyConnection,
    from: Option<FeedPosition>,
    to: FeedPosition,
    events: &[FannedEvent],
    now_ms: i64,
) -> QueryResult<bool> {
    if !move_position(conn, from, to)? {
        return Ok(false);
    }
    let add = in_dialect(conn, ADD_DELIVERIES);
    for event in events {
        diesel::sql_query(&add)
            .bind::<Text, _>(event.event_id.as_str())
            .bind::<Text, _>(event.event_type.as_str())
            .bind::<Binary, _>(event.body.as_slice())
            .bind::<BigInt, _>(now_ms)
            .bind::<BigInt, _>(now_ms)
            .bind::<BigInt, _>(type_bit(event.event_type))
            .bind::<BigInt, _>(event.occurred_at_ms)
            .execute(conn)?;
    }
    Ok(true)
}

#[async_trait]
impl DeliveryQueue for DieselDeliveryQueue {
    async fn fanned_out_to(&self) -> Result<Option<FeedPosition>, RepositoryError> {
        let row = self
            .store
            .read(|conn| {
                fanout::table
                    .select((fanout::commit_position, fanout::sequence))
                    .first::<FanoutRow>(conn)
                    .optional()
            })
            .await?;
        Ok(row.map(|at| FeedPosition::new(at.commit_position, at.sequence)))
    }

    async fn subscribed_types(&self) -> Result<Option<EventTypes>, RepositoryError> {
        let types = self
            .store
            .read(|conn| {
                webhook_endpoints::table
                    .filter(webhook_endpoints::disabled_reason.is_null())
                    .select(webhook_endpoints::event_types)
                    .load::<i64>(conn)
            })
            .await?;
        let bits = types.into_iter().fold(0, |all, types| {
            all | u16::try_from(types).unwrap_or(u16::MAX)
        });
        Ok(EventTypes::from_bits(bits))
    }

    async fn fan_out(
        &self,
        from: Option<FeedPosition>,
        to: FeedPosition,
        events: Vec<FannedEvent>,
        now_ms: i64,
    ) -> Result<bool, RepositoryError> {
        self.store
            .write(move |conn| fan_out_on(conn, from, to, &events, now_ms))
            .await
    }

    async fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<Vec<ClaimedDelivery>, RepositoryError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let owner = owner.to_owned();
        let lease_until_ms = now_ms.saturating_add(lease_ms);
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = self
            .store
            .write(move |conn| claims::claim(conn, &owner, now_ms, lease_until_ms, max))
            .await?;
        rows.into_iter()
            .map(|row| row.into_claimed(now_ms))
            .collect()
    }

    async fn settle(&self, settlement: Settlement) -> Result<bool, RepositoryError> {
        self.store
            .write(move |conn| claims::settle(conn, &settlement))
            .await
    }

    async fn oldest_pending(&self) -> Result<Option<i64>, RepositoryError> {
        self.store
            .read(|conn| {
                deliveries::table
                    .filter(deliveries::status.eq(DeliveryStatus::Pending.as_str()))
                    .select(diesel::dsl::min(deliveries::created_at_ms))
                    .first::<Option<i64>>(conn)
            })
            .await
    }

    async fn purge_finished(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError> {
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let deleted = self
            .store
            .write(move |conn| {
                diesel::sql_query(in_dialect(conn, PURGE_FINISHED))
                    .bind::<BigInt, _>(before_ms)
                    .bind::<BigInt, _>(max)
                    .execute(conn)
            })
            .await?;
        Ok(u64::try_from(deleted).unwrap_or(0))
    }
}
