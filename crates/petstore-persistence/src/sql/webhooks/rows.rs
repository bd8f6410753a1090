//! The webhook tables as diesel sees them, their rows, and the rows back into the domain.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Integer, Nullable, Text};
use petstore_application::webhooks::{ClaimedDelivery, SealedSecret};
use petstore_application::RepositoryError;
use petstore_domain::{
    AddressPolicy, Attempt, AttemptError, Delivery, DeliveryFailure, DeliveryId, DeliveryStatus,
    DisabledReason, EndpointId, EventId, EventType, EventTypes, WebhookEndpoint, WebhookUrl,
};

use crate::sql::engine::errors::ScrubbedMessage;

diesel::table! {
    /// Must match both dialects' `create_webhooks` migration.
    webhook_endpoints (id) {
        id -> BigInt,
        url -> Text,
        event_types -> BigInt,
        disabled_reason -> Nullable<Text>,
        secret_sealed -> Text,
        previous_secret_sealed -> Nullable<Text>,
        previous_secret_expires_ms -> Nullable<BigInt>,
        failing_since_ms -> Nullable<BigInt>,
        created_at_ms -> BigInt,
        updated_at_ms -> BigInt,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> BigInt,
        endpoint_id -> BigInt,
        event_id -> Text,
        event_type -> Text,
        body -> Binary,
        status -> Text,
        failure -> Nullable<Text>,
        attempts_made -> Integer,
        next_attempt_ms -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_until_ms -> Nullable<BigInt>,
        lease_token -> BigInt,
        created_at_ms -> BigInt,
    }
}

diesel::table! {
    webhook_attempts (delivery_id, number) {
        delivery_id -> BigInt,
        number -> Integer,
        at_ms -> BigInt,
        status_code -> Nullable<Integer>,
        latency_ms -> BigInt,
        error -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_fanout (singleton) {
        singleton -> Integer,
        commit_position -> BigInt,
        sequence -> BigInt,
    }
}

use webhook_attempts as attempts;
use webhook_deliveries as deliveries;
use webhook_endpoints as endpoints;

/// The columns an endpoint is read with, in [`EndpointRow`]'s order.
pub(super) const ENDPOINT_COLUMNS: (
    endpoints::id,
    endpoints::url,
    endpoints::event_types,
    endpoints::disabled_reason,
    endpoints::created_at_ms,
    endpoints::updated_at_ms,
) = (
    endpoints::id,
    endpoints::url,
    endpoints::event_types,
    endpoints::disabled_reason,
    endpoints::created_at_ms,
    endpoints::updated_at_ms,
);

/// The columns a delivery is read with, in [`DeliveryRow`]'s order.
pub(super) const DELIVERY_COLUMNS: (
    deliveries::id,
    deliveries::endpoint_id,
    deliveries::event_id,
    deliveries::event_type,
    deliveries::status,
    deliveries::failure,
    deliveries::next_attempt_ms,
    deliveries::created_at_ms,
) = (
    deliveries::id,
    deliveries::endpoint_id,
    deliveries::event_id,
    deliveries::event_type,
    deliveries::status,
    deliveries::failure,
    deliveries::next_attempt_ms,
    deliveries::created_at_ms,
);

/// The columns an attempt is read with, in [`AttemptRow`]'s order.
pub(super) const ATTEMPT_COLUMNS: (
    attempts::delivery_id,
    attempts::number,
    attempts::at_ms,
    attempts::status_code,
    attempts::latency_ms,
    attempts::error,
) = (
    attempts::delivery_id,
    attempts::number,
    attempts::at_ms,
    attempts::status_code,
    attempts::latency_ms,
    attempts::error,
);

/// A stored row that the domain refuses: the database was changed behind the service's back.
pub(super) fn corrupt(what: String) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(ScrubbedMessage(what)))
}

/// The bits an event type has in a stored [`EventTypes`].
pub(super) fn type_bit(kind: EventType) -> i64 {
    EventTypes::parse_list(kind.as_str()).map_or(0, |types| i64::from(types.bits()))
}

/// A stored URL, read back: it passed the rule when it was stored, and every delivery checks
/// the addresses it resolves to, so loopback is not refused again here.
fn stored_url(raw: &str, id: i64) -> Result<WebhookUrl, RepositoryError> {
    WebhookUrl::parse(
        raw,
        AddressPolicy {
            allow_loopback: true,
        },
    )
    .map_err(|_| corrupt(format!("stored webhook endpoint {id} has an invalid url")))
}

#[derive(Debug, Queryable)]
pub(super) struct EndpointRow {
    id: i64,
    url: String,
    event_types: i64,
    disabled_reason: Option<String>,
    created_at_ms: i64,
    updated_at_ms: i64,
}

impl EndpointRow {
    pub(super) fn into_endpoint(self) -> Result<WebhookEndpoint, RepositoryError> {
        let id = self.id;
        let invalid = |field: &str| {
            corrupt(format!(
                "stored webhook endpoint {id} has an invalid {field}"
            ))
        };
        let disabled = match self.disabled_reason.as_deref() {
            None => None,
            Some(raw) => {
                Some(DisabledReason::parse(raw).ok_or_else(|| invalid("disabled_reason"))?)
            }
        };
        Ok(WebhookEndpoint {
            id: EndpointId::parse(id).map_err(|_| invalid("id"))?,
            url: stored_url(&self.url, id)?,
            event_types: u16::try_from(self.event_types)
                .ok()
                .and_then(EventTypes::from_bits)
                .ok_or_else(|| invalid("event_types"))?,
            disabled,
            created_at_ms: self.created_at_ms,
            updated_at_ms: self.updated_at_ms,
        })
    }
}

#[derive(Debug, Queryable)]
pub(super) struct DeliveryRow {
    pub(super) id: i64,
    endpoint_id: i64,
    event_id: String,
    event_type: String,
    status: String,
    failure: Option<String>,
    next_attempt_ms: Option<i64>,
    created_at_ms: i64,
}

impl DeliveryRow {
    /// The delivery with `attempts`, those of [`AttemptRow`]s of it, oldest first.
    pub(super) fn into_delivery(self, attempts: Vec<Attempt>) -> Result<Delivery, RepositoryError> {
        let id = self.id;
        let invalid = |field: &str| {
            corrupt(format!(
                "stored webhook delivery {id} has an invalid {field}"
            ))
        };
        let failure = match self.failure.as_deref() {
            None => None,
            Some(raw) => Some(DeliveryFailure::parse(raw).ok_or_else(|| invalid("failure"))?),
        };
        Ok(Delivery {
            id: DeliveryId::parse(id).map_err(|_| invalid("id"))?,
            endpoint_id: EndpointId::parse(self.endpoint_id).map_err(|_| invalid("endpoint_id"))?,
            event_id: EventId::parse(&self.event_id).map_err(|_| invalid("event_id"))?,
            event_type: self.event_type,
            status: DeliveryStatus::parse(&self.status).ok_or_else(|| invalid("status"))?,
            failure,
            created_at_ms: self.created_at_ms,
            next_attempt_ms: self.next_attempt_ms,
            attempts,
        })
    }
}

#[derive(Debug, Queryable)]
pub(super) struct AttemptRow {
    pub(super) delivery_id: i64,
    number: i32,
    at_ms: i64,
    status_code: Option<i32>,
    latency_ms: i64,
    error: Option<String>,
}

impl AttemptRow {
    pub(super) fn into_attempt(self) -> Result<Attempt, RepositoryError> {
        let delivery = self.delivery_id;
        let invalid = |field: &str| {
            corrupt(format!(
                "stored attempt of webhook delivery {delivery} has an invalid {field}"
            ))
        };
        let error = match self.error.as_deref() {
            None => None,
            Some(raw) => Some(AttemptError::parse(raw).ok_or_else(|| invalid("error"))?),
        };
        Ok(Attempt {
            number: u32::try_from(self.number).map_err(|_| invalid("number"))?,
            at_ms: self.at_ms,
            status_code: self
                .status_code
                .map(u16::try_from)
                .transpose()
                .map_err(|_| invalid("status_code"))?,
            latency_ms: u32::try_from(self.latency_ms).unwrap_or(u32::MAX),
            error,
        })
    }
}

/// What a claim's statement returns of a delivery it leased, with its endpoint's columns.
#[derive(Debug, QueryableByName)]
pub(super) struct ClaimRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    endpoint_id: i64,
    #[diesel(sql_type = Text)]
    event_id: String,
    #[diesel(sql_type = Binary)]
    body: Vec<u8>,
    #[diesel(sql_type = Integer)]
    attempts_made: i32,
    #[diesel(sql_type = BigInt)]
    lease_token: i64,
    #[diesel(sql_type = BigInt)]
    lease_until_ms: i64,
    #[diesel(sql_type = BigInt)]
    pub(super) next_attempt_ms: i64,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Text)]
    secret_sealed: String,
    #[diesel(sql_type = Nullable<Text>)]
    previous_secret_sealed: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    previous_secret_expires_ms: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    failing_since_ms: Option<i64>,
}

impl ClaimRow {
    pub(super) fn id(&self) -> i64 {
        self.id
    }

    /// The claimed delivery; the previous secret only while it still signs at `now_ms`.
    pub(super) fn into_claimed(self, now_ms: i64) -> Result<ClaimedDelivery, RepositoryError> {
        let id = self.id;
        let invalid = |field: &str| {
            corrupt(format!(
                "stored webhook delivery {id} has an invalid {field}"
            ))
        };
        let previous_signs = self
            .previous_secret_expires_ms
            .is_some_and(|expires| expires > now_ms);
        Ok(ClaimedDelivery {
            id: DeliveryId::parse(id).map_err(|_| invalid("id"))?,
            endpoint: EndpointId::parse(self.endpoint_id).map_err(|_| invalid("endpoint_id"))?,
            url: stored_url(&self.url, self.endpoint_id)?,
            secret: SealedSecret(self.secret_sealed),
            previous_secret: self
                .previous_secret_sealed
                .filter(|_| previous_signs)
                .map(SealedSecret),
            event_id: EventId::parse(&self.event_id).map_err(|_| invalid("event_id"))?,
            body: self.body,
            attempts_made: u32::try_from(self.attempts_made)
                .map_err(|_| invalid("attempts_made"))?,
            failing_since_ms: self.failing_since_ms,
            lease_token: self.lease_token,
            lease_until_ms: self.lease_until_ms,
        })
    }
}

/// The feed position deliveries were made up to, as stored.
#[derive(Debug, Queryable)]
pub(super) struct FanoutRow {
    pub(super) commit_position: i64,
    pub(super) sequence: i64,
}
