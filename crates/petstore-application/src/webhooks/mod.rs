//! The webhook use cases: manage the endpoints the store posts its events to (their URLs,
//! types, secrets and deliveries), and deliver (`delivery`): fan each event of the feed out to
//! the endpoints that take it, then attempt each delivery on the retry schedule.

use std::sync::Arc;
use std::time::Duration;

use petstore_domain::{
    Delivery, DeliveryId, DeliveryStatus, EndpointId, EventTypes, PageLimit, WebhookEndpoint,
    WebhookUrl, PING_EVENT_TYPE,
};

mod delivery;
mod ports;
#[cfg(test)]
mod tests;

pub use delivery::{AttemptReport, DeliveryRound, DeliveryService, DeliverySettings};
pub use ports::{
    ClaimedDelivery, CreatedEndpoint, DeliveryQuery, DeliveryQueue, EndpointChange, EndpointHealth,
    EventBody, FannedEvent, NewDelivery, NewEndpoint, NextStep, Outgoing, RotatedSecret, SealError,
    SealedSecret, SecretRotation, SecretVault, SendOutcome, Settlement, WebhookRepository,
    WebhookSender,
};
#[cfg(any(test, feature = "mocks"))]
pub use ports::{
    MockDeliveryQueue, MockEventBody, MockSecretVault, MockWebhookRepository, MockWebhookSender,
};

use crate::clock::{unix_millis, Clock};
use crate::idempotency::{RecordPlan, Written};
use crate::paging::cut_page;
use crate::storage::RepositoryError;

/// How long a rotated-out secret keeps signing: a day, for receivers to take the new one.
pub const SECRET_ROTATION_WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

/// Why a webhook use case failed; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("no webhook endpoint has the id {0}")]
    NotFound(EndpointId),
    #[error("webhook endpoint {endpoint} has no delivery with the id {delivery}")]
    DeliveryNotFound {
        endpoint: EndpointId,
        delivery: DeliveryId,
    },
    #[error(
        "the store has {max} webhook endpoints already, the most it keeps; delete one first",
        max = petstore_domain::MAX_WEBHOOK_ENDPOINTS
    )]
    TooManyEndpoints,
    #[error("webhook endpoint {0} is disabled; enable it first")]
    EndpointDisabled(EndpointId),
    #[error("delivery {0} is being attempted right now; retry it after the attempt")]
    InFlight(DeliveryId),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// One page of endpoints; `next_after` is where the following page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPage {
    pub endpoints: Vec<WebhookEndpoint>,
    pub next_after: Option<EndpointId>,
}

/// One page of an endpoint's deliveries, newest first; `next_before` is where the following
/// page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryPage {
    pub deliveries: Vec<Delivery>,
    pub next_before: Option<DeliveryId>,
}

/// A new endpoint as a client asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointRequest {
    pub url: WebhookUrl,
    pub event_types: EventTypes,
    pub enabled: bool,
}

/// The endpoint use cases over whichever repository, vault, renderer and clock the composition
/// root chose.
#[derive(Clone)]
pub struct WebhookService {
    repository: Arc<dyn WebhookRepository>,
    vault: Arc<dyn SecretVault>,
    bodies: Arc<dyn EventBody>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for WebhookService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookService").finish_non_exhaustive()
    }
}

impl WebhookService {
    pub fn new(
        repository: Arc<dyn WebhookRepository>,
        vault: Arc<dyn SecretVault>,
        bodies: Arc<dyn EventBody>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            repository,
            vault,
            bodies,
            clock,
        }
    }

    fn now_ms(&self) -> i64 {
        unix_millis(self.clock.now())
    }

    /// `listWebhookEndpoints`: one page in ascending id order, after `after`.
    pub async fn list_endpoints(
        &self,
        after: Option<EndpointId>,
        limit: PageLimit,
    ) -> Result<EndpointPage, RepositoryError> {
        let limit = usize::from(limit.get());
        let mut endpoints = self.repository.list(after, limit + 1).await?;
        let next_after = cut_page(&mut endpoints, limit, |endpoint| endpoint.id);
        Ok(EndpointPage {
            endpoints,
            next_after,
        })
    }

    /// `getWebhookEndpoint`.
    pub async fn get_endpoint(&self, id: EndpointId) -> Result<WebhookEndpoint, WebhookError> {
        self.repository
            .find(id)
            .await?
            .ok_or(WebhookError::NotFound(id))
    }

    /// `createWebhookEndpoint`: stores the endpoint with a new secret, answered once. It is
    /// sent the events written from now on.
    pub async fn create_endpoint(
        &self,
        request: EndpointRequest,
        plan: Option<RecordPlan<CreatedEndpoint>>,
    ) -> Result<Written<CreatedEndpoint>, WebhookError> {
        let (secret, sealed) = self.vault.generate();
        let endpoint = NewEndpoint {
            url: request.url,
            event_types: request.event_types,
            enabled: request.enabled,
            secret,
            sealed,
            now_ms: self.now_ms(),
        };
        self.repository.create(endpoint, plan).await
    }

    /// `updateWebhookEndpoint`.
    pub async fn update_endpoint(
        &self,
        id: EndpointId,
        change: EndpointChange,
        plan: Option<RecordPlan<WebhookEndpoint>>,
    ) -> Result<Written<WebhookEndpoint>, WebhookError> {
        self.repository
            .update(id, change, self.now_ms(), plan)
            .await
    }

    /// `deleteWebhookEndpoint`: the endpoint and its deliveries.
    pub async fn delete_endpoint(&self, id: EndpointId) -> Result<(), WebhookError> {
        self.repository.delete(id).await
    }

    /// `rotateWebhookSecret`: a new secret, answered once; the one before keeps signing for
    /// [`SECRET_ROTATION_WINDOW`].
    pub async fn rotate_secret(
        &self,
        id: EndpointId,
        plan: Option<RecordPlan<RotatedSecret>>,
    ) -> Result<Written<RotatedSecret>, WebhookError> {
        let (secret, sealed) = self.vault.generate();
        let now_ms = self.now_ms();
        let window = i64::try_from(SECRET_ROTATION_WINDOW.as_millis()).unwrap_or(i64::MAX);
        let rotation = SecretRotation {
            secret,
            sealed,
            previous_expires_ms: now_ms.saturating_add(window),
            now_ms,
        };
        self.repository.rotate_secret(id, rotation, plan).await
    }

    /// `pingWebhookEndpoint`: a test event (`webhook.ping`) delivered like any other, never in
    /// the feed.
    pub async fn ping(&self, id: EndpointId) -> Result<Delivery, WebhookError> {
        let now_ms = self.now_ms();
        let (event_id, body) = self.bodies.ping(now_ms, id);
        self.repository
            .add_delivery(NewDelivery {
                endpoint: id,
                event_id,
                event_type: PING_EVENT_TYPE.to_owned(),
                body,
                now_ms,
            })
            .await
    }

    /// `listWebhookDeliveries`: newest first, before `before`, of `status` when given.
    pub async fn list_deliveries(
        &self,
        endpoint: EndpointId,
        status: Option<DeliveryStatus>,
        before: Option<DeliveryId>,
        limit: PageLimit,
    ) -> Result<DeliveryPage, WebhookError> {
        let limit = usize::from(limit.get());
        let mut deliveries = self
            .repository
            .deliveries(DeliveryQuery {
                endpoint,
                status,
                before,
                max: limit + 1,
            })
            .await?;
        let next_before = cut_page(&mut deliveries, limit, |delivery| delivery.id);
        Ok(DeliveryPage {
            deliveries,
            next_before,
        })
    }

    /// `getWebhookDelivery`.
    pub async fn get_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
    ) -> Result<Delivery, WebhookError> {
        self.repository
            .find_delivery(endpoint, id)
            .await?
            .ok_or(WebhookError::DeliveryNotFound {
                endpoint,
                delivery: id,
            })
    }

    /// `retryWebhookDelivery`: makes the delivery due now. A delivery that had used up its
    /// schedule gets one more attempt; one failed by its endpoint's disabling resumes its
    /// schedule.
    pub async fn retry_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
    ) -> Result<Delivery, WebhookError> {
        self.repository
            .retry_delivery(endpoint, id, self.now_ms())
            .await
    }
}
