//! What the webhook use cases need of the outside world: where endpoints and deliveries are
//! kept (`WebhookRepository`, `DeliveryQueue`), how a secret is made and kept sealed
//! (`SecretVault`), how an event becomes the body posted (`EventBody`) and how one attempt is
//! sent (`WebhookSender`).

use async_trait::async_trait;
use petstore_domain::{
    Attempt, AttemptError, Delivery, DeliveryFailure, DeliveryId, DeliveryStatus, EndpointId,
    Event, EventId, EventTypes, FeedPosition, SigningSecret, WebhookEndpoint, WebhookUrl,
};

use super::WebhookError;
use crate::idempotency::{RecordPlan, Written};
use crate::storage::RepositoryError;

/// A signing secret as stored: sealed by the [`SecretVault`], opaque to storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedSecret(pub String);

/// An endpoint to store, with its first secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEndpoint {
    pub url: WebhookUrl,
    pub event_types: EventTypes,
    pub enabled: bool,
    /// Handed back in [`CreatedEndpoint`], never stored as it is.
    pub secret: SigningSecret,
    pub sealed: SealedSecret,
    pub now_ms: i64,
}

/// A stored endpoint with the secret it was made with, answered once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedEndpoint {
    pub endpoint: WebhookEndpoint,
    pub secret: SigningSecret,
}

/// What a `PATCH` changes; `None` leaves a field as it is. Disabling fails the endpoint's
/// pending deliveries (`endpoint_disabled`); enabling clears why it was disabled and how long
/// it has been failing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointChange {
    pub url: Option<WebhookUrl>,
    pub event_types: Option<EventTypes>,
    pub enabled: Option<bool>,
}

/// A new secret for an endpoint; the one before keeps signing until `previous_expires_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRotation {
    pub secret: SigningSecret,
    pub sealed: SealedSecret,
    pub previous_expires_ms: i64,
    pub now_ms: i64,
}

/// A rotated endpoint's new secret, answered once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotatedSecret {
    pub endpoint: WebhookEndpoint,
    pub secret: SigningSecret,
    pub previous_expires_ms: i64,
}

/// Which deliveries of an endpoint to list: newest first, those with an id below `before`
/// (from the newest when `None`), of `status` when given, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryQuery {
    pub endpoint: EndpointId,
    pub status: Option<DeliveryStatus>,
    pub before: Option<DeliveryId>,
    pub max: usize,
}

/// A delivery to add now, outside the feed (a ping).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub endpoint: EndpointId,
    pub event_id: EventId,
    pub event_type: String,
    pub body: Vec<u8>,
    pub now_ms: i64,
}

/// Where webhook endpoints and their deliveries are kept. Ids are unique, increasing and never
/// handed out again. Deleting an endpoint deletes its deliveries.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookRepository: Send + Sync + 'static {
    /// Stores a new endpoint; `TooManyEndpoints` when [`MAX_WEBHOOK_ENDPOINTS`] are stored
    /// already. With a `plan`, as every recorded write (`CategoryRepository::create`).
    ///
    /// [`MAX_WEBHOOK_ENDPOINTS`]: petstore_domain::MAX_WEBHOOK_ENDPOINTS
    async fn create(
        &self,
        endpoint: NewEndpoint,
        plan: Option<RecordPlan<CreatedEndpoint>>,
    ) -> Result<Written<CreatedEndpoint>, WebhookError>;

    /// Changes the endpoint `id` (see [`EndpointChange`]), its `updated_at_ms` becoming
    /// `now_ms` when anything changed; `NotFound` when no endpoint has the id.
    async fn update(
        &self,
        id: EndpointId,
        change: EndpointChange,
        now_ms: i64,
        plan: Option<RecordPlan<WebhookEndpoint>>,
    ) -> Result<Written<WebhookEndpoint>, WebhookError>;

    /// Replaces the endpoint's secret; its current one becomes the previous one until the
    /// rotation's `previous_expires_ms` (a previous one still kept is dropped).
    async fn rotate_secret(
        &self,
        id: EndpointId,
        rotation: SecretRotation,
        plan: Option<RecordPlan<RotatedSecret>>,
    ) -> Result<Written<RotatedSecret>, WebhookError>;

    /// Deletes the endpoint `id` and its deliveries; `NotFound` when no endpoint has the id.
    async fn delete(&self, id: EndpointId) -> Result<(), WebhookError>;

    async fn find(&self, id: EndpointId) -> Result<Option<WebhookEndpoint>, RepositoryError>;

    /// Endpoints with an id greater than `after` (from the first when `None`), ascending, at
    /// most `max`.
    async fn list(
        &self,
        after: Option<EndpointId>,
        max: usize,
    ) -> Result<Vec<WebhookEndpoint>, RepositoryError>;

    /// Adds a pending delivery due at `now_ms`; `NotFound` when no endpoint has the id,
    /// `EndpointDisabled` when it is disabled.
    async fn add_delivery(&self, delivery: NewDelivery) -> Result<Delivery, WebhookError>;

    /// The endpoint's deliveries of `query`, each with its attempts (oldest first); `NotFound`
    /// when no endpoint has the id.
    async fn deliveries(&self, query: DeliveryQuery) -> Result<Vec<Delivery>, WebhookError>;

    /// The delivery `id` of the endpoint `endpoint`, with its attempts.
    async fn find_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
    ) -> Result<Option<Delivery>, RepositoryError>;

    /// Makes the delivery pending and due at `now_ms` (its failure cleared, its attempts
    /// kept); `NotFound` (endpoint or delivery), `EndpointDisabled`, or `InFlight` when an
    /// attempt of it is being made (its lease has not run out).
    async fn retry_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
        now_ms: i64,
    ) -> Result<Delivery, WebhookError>;
}

/// One event of the feed, rendered, to be delivered to each enabled endpoint that takes its
/// type and was created at or before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FannedEvent {
    pub position: FeedPosition,
    pub event_id: EventId,
    pub event_type: petstore_domain::EventType,
    pub occurred_at_ms: i64,
    pub body: Vec<u8>,
}

/// A delivery claimed for one attempt: everything the attempt needs, and the lease's token
/// that its settlement must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: DeliveryId,
    pub endpoint: EndpointId,
    pub url: WebhookUrl,
    pub secret: SealedSecret,
    /// The secret before the last rotation, while it still signs.
    pub previous_secret: Option<SealedSecret>,
    pub event_id: EventId,
    pub body: Vec<u8>,
    /// Attempts made before this one.
    pub attempts_made: u32,
    /// Since when every attempt to the endpoint failed (milliseconds since the epoch).
    pub failing_since_ms: Option<i64>,
    pub lease_token: i64,
    /// The lease runs out then (milliseconds since the epoch): no attempt is started that could
    /// outlive it.
    pub lease_until_ms: i64,
}

/// What became of an attempt's delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    Succeeded,
    RetryAt(i64),
    Failed(DeliveryFailure),
}

/// What an endpoint's record becomes after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointHealth {
    /// It answered: no longer failing.
    Answering,
    /// It failed: failing since `since_ms` unless it was already.
    Failing { since_ms: i64 },
    /// It failed for too long: disabled (`failing`), its pending deliveries failed.
    Disable,
}

/// The outcome of one attempt, recorded under the lease it was made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    pub delivery: DeliveryId,
    pub endpoint: EndpointId,
    pub lease_token: i64,
    pub attempt: Attempt,
    pub next: NextStep,
    pub health: EndpointHealth,
}

/// The queue the delivery worker takes its work from. On PostgreSQL several instances share it:
/// a delivery is leased to one of them at a time, and a lease that runs out (the instance
/// crashed) lets another take it.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait DeliveryQueue: Send + Sync + 'static {
    /// The feed position deliveries were made up to (`None`: none yet).
    async fn fanned_out_to(&self) -> Result<Option<FeedPosition>, RepositoryError>;

    /// Every type some enabled endpoint takes; `None` when no endpoint is enabled.
    async fn subscribed_types(&self) -> Result<Option<EventTypes>, RepositoryError>;

    /// In one transaction: moves the position from `from` to `to` and adds a pending delivery,
    /// due at `now_ms`, of each event to each enabled endpoint whose types include the
    /// event's and that was created at or before it. `false`, changing nothing, when the
    /// position is no longer `from` (another instance moved it first).
    async fn fan_out(
        &self,
        from: Option<FeedPosition>,
        to: FeedPosition,
        events: Vec<FannedEvent>,
        now_ms: i64,
    ) -> Result<bool, RepositoryError>;

    /// Leases at most `max` pending deliveries due at `now_ms` of enabled endpoints, oldest due
    /// first, that no live lease holds, to `owner` until `now_ms + lease_ms`.
    async fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<Vec<ClaimedDelivery>, RepositoryError>;

    /// Records an attempt and what follows from it, and ends the lease, in one transaction;
    /// `false`, recording nothing, when the delivery's lease token is no longer the
    /// settlement's (the lease ran out and another instance took it).
    async fn settle(&self, settlement: Settlement) -> Result<bool, RepositoryError>;

    /// When the oldest pending delivery was added (milliseconds since the epoch).
    async fn oldest_pending(&self) -> Result<Option<i64>, RepositoryError>;

    /// Deletes at most `max` finished deliveries (succeeded or failed) added before
    /// `before_ms`, with their attempts; how many it deleted.
    async fn purge_finished(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError>;
}

/// Why a sealed secret could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("a stored webhook secret cannot be opened with the configured key secrets")]
pub struct SealError;

/// Makes signing secrets and keeps them sealed at rest.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait SecretVault: Send + Sync + 'static {
    /// A new random secret and its sealed form.
    fn generate(&self) -> (SigningSecret, SealedSecret);
    fn open(&self, sealed: &SealedSecret) -> Result<SigningSecret, SealError>;
}

/// How events and pings become the JSON bodies posted: each exactly as `listEvents` answers
/// the event.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait EventBody: Send + Sync + 'static {
    fn event(&self, event: &Event) -> Vec<u8>;
    /// A test event for `endpoint` at `at_ms`, with a new random id.
    fn ping(&self, at_ms: i64, endpoint: EndpointId) -> (EventId, Vec<u8>);
}

/// One attempt to post: signed by the sender with each secret at `timestamp_s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub url: WebhookUrl,
    pub webhook_id: EventId,
    /// Seconds since the epoch, sent as `webhook-timestamp` and signed.
    pub timestamp_s: i64,
    pub secrets: Vec<SigningSecret>,
    pub body: Vec<u8>,
}

/// What an attempt's request got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOutcome {
    pub status_code: Option<u16>,
    pub latency_ms: u32,
    /// `None`: a 2xx within the deadline.
    pub error: Option<AttemptError>,
    /// A 429 or 503's `Retry-After`, in seconds.
    pub retry_after_s: Option<u64>,
}

/// Sends one attempt: resolves the host once, refuses a forbidden address, connects to the
/// checked address only, posts, and reads a bounded part of the answer, within a deadline.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookSender: Send + Sync + 'static {
    async fn send(&self, outgoing: Outgoing) -> SendOutcome;
}
