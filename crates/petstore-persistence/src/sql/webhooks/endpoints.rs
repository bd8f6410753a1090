//! `DieselWebhookRepository`: the endpoints (create, change, rotate, delete, read) and, through
//! `deliveries.rs`, their deliveries as the API manages them.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use petstore_application::webhooks::{
    CreatedEndpoint, DeliveryQuery, EndpointChange, NewDelivery, NewEndpoint, RotatedSecret,
    SecretRotation,
};
use petstore_application::{RecordPlan, RepositoryError, WebhookError, WebhookRepository, Written};
use petstore_domain::{
    Delivery, DeliveryFailure, DeliveryId, DisabledReason, EndpointId, WebhookEndpoint,
    MAX_WEBHOOK_ENDPOINTS,
};

use super::deliveries;
use super::endpoint_lookup::{existing, find_on, stored};
use super::pending;
use super::rows::{webhook_endpoints as endpoints, EndpointRow, ENDPOINT_COLUMNS};
use super::WebhookStore;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::write_transaction::{lock_on_postgres, no_turn};
use crate::sql::idempotency::recorded_write::Stop;

/// Key of the PostgreSQL advisory lock endpoint writes take turns on: "webhooks" in ASCII.
const ENDPOINT_WRITES_LOCK_KEY: i64 = 0x7765_6268_6f6f_6b73;

/// Webhook endpoints and their deliveries in the database behind a pool.
#[derive(Debug, Clone)]
pub struct DieselWebhookRepository {
    store: WebhookStore,
}

impl DieselWebhookRepository {
    pub(crate) fn new(store: WebhookStore) -> Self {
        Self { store }
    }
}

/// The turn of an endpoint write: on PostgreSQL the endpoints' advisory lock, held until the
/// transaction ends, so the count of endpoints is checked and kept in one turn; on SQLite
/// nothing beyond `BEGIN IMMEDIATE`.
fn take_turn(conn: &mut AnyConnection) -> QueryResult<()> {
    lock_on_postgres(conn, |pg| {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(ENDPOINT_WRITES_LOCK_KEY)
            .execute(pg)
    })
}

fn insert(
    conn: &mut AnyConnection,
    endpoint: &NewEndpoint,
) -> Result<CreatedEndpoint, Stop<WebhookError>> {
    let count: i64 = endpoints::table.count().get_result(conn)?;
    if usize::try_from(count).unwrap_or(usize::MAX) >= MAX_WEBHOOK_ENDPOINTS {
        return Err(Stop::Refused(WebhookError::TooManyEndpoints));
    }
    let disabled = (!endpoint.enabled).then_some(DisabledReason::Manual.as_str());
    let insert = diesel::insert_into(endpoints::table)
        .values((
            endpoints::url.eq(endpoint.url.as_str()),
            endpoints::event_types.eq(i64::from(endpoint.event_types.bits())),
            endpoints::disabled_reason.eq(disabled),
            endpoints::secret_sealed.eq(endpoint.sealed.0.as_str()),
            endpoints::created_at_ms.eq(endpoint.now_ms),
            endpoints::updated_at_ms.eq(endpoint.now_ms),
        ))
        .returning(ENDPOINT_COLUMNS);
    let row = match conn {
        AnyConnection::Postgresql(pg) => insert.get_result::<EndpointRow>(pg),
        AnyConnection::Sqlite(sqlite) => insert.get_result::<EndpointRow>(sqlite),
    }?;
    Ok(CreatedEndpoint {
        endpoint: stored(row)?,
        secret: endpoint.secret.clone(),
    })
}

/// The columns a change sets; `None` leaves a column as it is.
#[derive(AsChangeset)]
#[diesel(table_name = endpoints)]
struct Changed<'a> {
    url: Option<&'a str>,
    event_types: Option<i64>,
    disabled_reason: Option<Option<&'static str>>,
    failing_since_ms: Option<Option<i64>>,
    updated_at_ms: i64,
}

fn change(
    conn: &mut AnyConnection,
    id: EndpointId,
    change: &EndpointChange,
    now_ms: i64,
) -> Result<WebhookEndpoint, Stop<WebhookError>> {
    let current = existing(conn, id)?;
    let url = change.url.as_ref().filter(|url| **url != current.url);
    let event_types = change
        .event_types
        .filter(|types| *types != current.event_types);
    let enabled = change
        .enabled
        .filter(|enabled| *enabled != current.is_enabled());
    if url.is_none() && event_types.is_none() && enabled.is_none() {
        return Ok(current);
    }
    let changed = Changed {
        url: url.map(|url| url.as_str()),
        event_types: event_types.map(|types| i64::from(types.bits())),
        disabled_reason: enabled
            .map(|enabled| (!enabled).then_some(DisabledReason::Manual.as_str())),
        // Enabling starts the endpoint's health afresh.
        failing_since_ms: enabled.filter(|enabled| *enabled).map(|_| None),
        updated_at_ms: now_ms,
    };
    diesel::update(endpoints::table.find(id.get()))
        .set(&changed)
        .execute(conn)?;
    if enabled == Some(false) {
        pending::fail_pending(conn, id, DeliveryFailure::EndpointDisabled)?;
    }
    existing(conn, id)
}

fn rotate(
    conn: &mut AnyConnection,
    id: EndpointId,
    rotation: &SecretRotation,
) -> Result<RotatedSecret, Stop<WebhookError>> {
    existing(conn, id)?;
    diesel::update(endpoints::table.find(id.get()))
        .set((
            endpoints::previous_secret_sealed.eq(endpoints::secret_sealed.nullable()),
            endpoints::previous_secret_expires_ms.eq(Some(rotation.previous_expires_ms)),
            endpoints::secret_sealed.eq(rotation.sealed.0.as_str()),
            endpoints::updated_at_ms.eq(rotation.now_ms),
        ))
        .execute(conn)?;
    Ok(RotatedSecret {
        endpoint: existing(conn, id)?,
        secret: rotation.secret.clone(),
        previous_expires_ms: rotation.previous_expires_ms,
    })
}

fn delete(conn: &mut AnyConnection, id: EndpointId) -> Result<(), Stop<WebhookError>> {
    // Its deliveries and their attempts go with it (`ON DELETE CASCADE`).
    let deleted = diesel::delete(endpoints::table.find(id.get())).execute(conn)?;
    if deleted == 0 {
        return Err(Stop::Refused(WebhookError::NotFound(id)));
    }
    Ok(())
}

#[async_trait]
impl WebhookRepository for DieselWebhookRepository {
    async fn create(
        &self,
        endpoint: NewEndpoint,
        plan: Option<RecordPlan<CreatedEndpoint>>,
    ) -> Result<Written<CreatedEndpoint>, WebhookError> {
        self.store
            .write_recorded(take_turn, plan, move |conn| insert(conn, &endpoint))
            .await
    }

    async fn update(
        &self,
        id: EndpointId,
        endpoint_change: EndpointChange,
        now_ms: i64,
        plan: Option<RecordPlan<WebhookEndpoint>>,
    ) -> Result<Written<WebhookEndpoint>, WebhookError> {
        self.store
            .write_recorded(take_turn, plan, move |conn| {
                change(conn, id, &endpoint_change, now_ms)
            })
            .await
    }

    async fn rotate_secret(
        &self,
        id: EndpointId,
        rotation: SecretRotation,
        plan: Option<RecordPlan<RotatedSecret>>,
    ) -> Result<Written<RotatedSecret>, WebhookError> {
        self.store
            .write_recorded(take_turn, plan, move |conn| rotate(conn, id, &rotation))
            .await
    }

    async fn delete(&self, id: EndpointId) -> Result<(), WebhookError> {
        self.store
            .write_refusable(take_turn, move |conn| delete(conn, id))
            .await
    }

    async fn find(&self, id: EndpointId) -> Result<Option<WebhookEndpoint>, RepositoryError> {
        let row = self.store.read(move |conn| find_on(conn, id)).await?;
        row.map(EndpointRow::into_endpoint).transpose()
    }

    async fn list(
        &self,
        after: Option<EndpointId>,
        max: usize,
    ) -> Result<Vec<WebhookEndpoint>, RepositoryError> {
        let after = after.map_or(0, EndpointId::get);
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = self
            .store
            .read(move |conn| {
                endpoints::table
                    .filter(endpoints::id.gt(after))
                    .select(ENDPOINT_COLUMNS)
                    .order(endpoints::id)
                    .limit(max)
                    .load::<EndpointRow>(conn)
            })
            .await?;
        rows.into_iter().map(EndpointRow::into_endpoint).collect()
    }

    async fn add_delivery(&self, delivery: NewDelivery) -> Result<Delivery, WebhookError> {
        self.store
            .write_refusable(no_turn, move |conn| deliveries::add(conn, &delivery))
            .await
    }

    async fn deliveries(&self, query: DeliveryQuery) -> Result<Vec<Delivery>, WebhookError> {
        let endpoint = query.endpoint;
        let found = self
            .store
            .read(move |conn| deliveries::list(conn, &query))
            .await?;
        let found = found.ok_or(WebhookError::NotFound(endpoint))?;
        Ok(deliveries::assemble(found)?)
    }

    async fn find_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
    ) -> Result<Option<Delivery>, RepositoryError> {
        let found = self
            .store
            .read(move |conn| deliveries::find(conn, endpoint, id))
            .await?;
        Ok(deliveries::assemble(found)?.pop())
    }

    async fn retry_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
        now_ms: i64,
    ) -> Result<Delivery, WebhookError> {
        self.store
            .write_refusable(no_turn, move |conn| {
                deliveries::retry(conn, endpoint, id, now_ms)
            })
            .await
    }
}
