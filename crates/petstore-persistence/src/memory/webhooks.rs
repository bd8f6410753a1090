//! `InMemoryWebhooks`: webhook endpoints, their deliveries and the delivery queue of a `memory:`
//! store, under the store's one lock (with the idempotency records their writes store). The
//! same contract as the SQL adapters: ids increasing and never handed out again, the fan-out
//! position moved by compare-and-set, a delivery leased to one claimer at a time and settled
//! only under the lease it was claimed with.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use petstore_application::webhooks::{
    ClaimedDelivery, CreatedEndpoint, DeliveryQuery, EndpointChange, EndpointHealth, FannedEvent,
    NewDelivery, NewEndpoint, NextStep, RotatedSecret, SealedSecret, SecretRotation, Settlement,
};
use petstore_application::{
    DeliveryQueue, RecordPlan, RepositoryError, WebhookError, WebhookRepository, Written,
};
use petstore_domain::{
    Delivery, DeliveryFailure, DeliveryId, DeliveryStatus, DisabledReason, EndpointId, EventTypes,
    FeedPosition, WebhookEndpoint, MAX_WEBHOOK_ENDPOINTS,
};

use super::{InMemoryPetRepository, State};

#[derive(Debug, Clone)]
struct StoredEndpoint {
    endpoint: WebhookEndpoint,
    secret: SealedSecret,
    /// The secret before the last rotation, and until when it signs.
    previous: Option<(SealedSecret, i64)>,
    failing_since_ms: Option<i64>,
}

#[derive(Debug, Clone)]
struct StoredDelivery {
    delivery: Delivery,
    body: Vec<u8>,
    /// Until when the delivery is leased, while a claim holds it (run out or not).
    lease_until_ms: Option<i64>,
    lease_token: i64,
}

impl StoredDelivery {
    fn is_pending(&self) -> bool {
        self.delivery.status == DeliveryStatus::Pending
    }

    fn fail(&mut self, failure: DeliveryFailure) {
        self.delivery.status = DeliveryStatus::Failed;
        self.delivery.failure = Some(failure);
        self.delivery.next_attempt_ms = None;
    }
}

/// What the store holds of webhooks.
#[derive(Debug, Default)]
pub(super) struct Webhooks {
    endpoints: BTreeMap<i64, StoredEndpoint>,
    last_endpoint_id: i64,
    deliveries: BTreeMap<i64, StoredDelivery>,
    last_delivery_id: i64,
    fanned_out_to: Option<FeedPosition>,
}

fn unexpected(error: impl std::error::Error + Send + Sync + 'static) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(error))
}

impl Webhooks {
    fn stored(&mut self, id: EndpointId) -> Result<&mut StoredEndpoint, WebhookError> {
        self.endpoints
            .get_mut(&id.get())
            .ok_or(WebhookError::NotFound(id))
    }

    fn enabled(&mut self, id: EndpointId) -> Result<(), WebhookError> {
        if self.stored(id)?.endpoint.is_enabled() {
            Ok(())
        } else {
            Err(WebhookError::EndpointDisabled(id))
        }
    }

    fn create(&mut self, new: NewEndpoint) -> Result<CreatedEndpoint, WebhookError> {
        if self.endpoints.len() >= MAX_WEBHOOK_ENDPOINTS {
            return Err(WebhookError::TooManyEndpoints);
        }
        let id = EndpointId::parse(self.last_endpoint_id + 1).map_err(unexpected)?;
        let endpoint = WebhookEndpoint {
            id,
            url: new.url,
            event_types: new.event_types,
            disabled: (!new.enabled).then_some(DisabledReason::Manual),
            created_at_ms: new.now_ms,
            updated_at_ms: new.now_ms,
        };
        self.last_endpoint_id = id.get();
        self.endpoints.insert(
            id.get(),
            StoredEndpoint {
                endpoint: endpoint.clone(),
                secret: new.sealed,
                previous: None,
                failing_since_ms: None,
            },
        );
        Ok(CreatedEndpoint {
            endpoint,
            secret: new.secret,
        })
    }

    fn update(
        &mut self,
        id: EndpointId,
        change: EndpointChange,
        now_ms: i64,
    ) -> Result<WebhookEndpoint, WebhookError> {
        let stored = self.stored(id)?;
        let current = &stored.endpoint;
        let url = change.url.filter(|url| *url != current.url);
        let event_types = change
            .event_types
            .filter(|types| *types != current.event_types);
        let enabled = change
            .enabled
            .filter(|enabled| *enabled != current.is_enabled());
        if url.is_none() && event_types.is_none() && enabled.is_none() {
            return Ok(current.clone());
        }
        let endpoint = &mut stored.endpoint;
        if let Some(url) = url {
            endpoint.url = url;
        }
        if let Some(types) = event_types {
            endpoint.event_types = types;
        }
        match enabled {
            Some(true) => {
                endpoint.disabled = None;
                stored.failing_since_ms = None;
            }
            Some(false) => endpoint.disabled = Some(DisabledReason::Manual),
            None => {}
        }
        endpoint.updated_at_ms = now_ms;
        let endpoint = endpoint.clone();
        if enabled == Some(false) {
            self.fail_pending(id);
        }
        Ok(endpoint)
    }

    fn rotate(
        &mut self,
        id: EndpointId,
        rotation: SecretRotation,
    ) -> Result<RotatedSecret, WebhookError> {
        let stored = self.stored(id)?;
        let before = std::mem::replace(&mut stored.secret, rotation.sealed);
        stored.previous = Some((before, rotation.previous_expires_ms));
        stored.endpoint.updated_at_ms = rotation.now_ms;
        Ok(RotatedSecret {
            endpoint: stored.endpoint.clone(),
            secret: rotation.secret,
            previous_expires_ms: rotation.previous_expires_ms,
        })
    }

    fn delete(&mut self, id: EndpointId) -> Result<(), WebhookError> {
        self.endpoints
            .remove(&id.get())
            .ok_or(WebhookError::NotFound(id))?;
        self.deliveries
            .retain(|_, stored| stored.delivery.endpoint_id != id);
        Ok(())
    }

    fn fail_pending(&mut self, endpoint: EndpointId) {
        for stored in self.deliveries.values_mut() {
            if stored.delivery.endpoint_id == endpoint && stored.is_pending() {
                stored.fail(DeliveryFailure::EndpointDisabled);
            }
        }
    }

    /// Adds a pending delivery due at `now_ms` (nothing when the endpoint has the event's
    /// delivery already).
    fn add(&mut self, delivery: NewDelivery) -> Result<Delivery, RepositoryError> {
        let id = DeliveryId::parse(self.last_delivery_id + 1).map_err(unexpected)?;
        let added = Delivery {
            id,
            endpoint_id: delivery.endpoint,
            event_id: delivery.event_id,
            event_type: delivery.event_type,
            status: DeliveryStatus::Pending,
            failure: None,
            created_at_ms: delivery.now_ms,
            next_attempt_ms: Some(delivery.now_ms),
            attempts: Vec::new(),
        };
        self.last_delivery_id = id.get();
        self.deliveries.insert(
            id.get(),
            StoredDelivery {
                delivery: added.clone(),
                body: delivery.body,
                lease_until_ms: None,
                lease_token: 0,
            },
        );
        Ok(added)
    }

    fn delivery_of(&mut self, endpoint: EndpointId, id: DeliveryId) -> Option<&mut StoredDelivery> {
        self.deliveries
            .get_mut(&id.get())
            .filter(|stored| stored.delivery.endpoint_id == endpoint)
    }

    fn retry(
        &mut self,
        endpoint: EndpointId,
        id: DeliveryId,
        now_ms: i64,
    ) -> Result<Delivery, WebhookError> {
        self.enabled(endpoint)?;
        let stored = self
            .delivery_of(endpoint, id)
            .ok_or(WebhookError::DeliveryNotFound {
                endpoint,
                delivery: id,
            })?;
        if stored.lease_until_ms.is_some_and(|until| until > now_ms) {
            return Err(WebhookError::InFlight(id));
        }
        stored.lease_until_ms = None;
        stored.delivery.status = DeliveryStatus::Pending;
        stored.delivery.failure = None;
        stored.delivery.next_attempt_ms = Some(now_ms);
        Ok(stored.delivery.clone())
    }

    fn fan_out(
        &mut self,
        from: Option<FeedPosition>,
        to: FeedPosition,
        events: Vec<FannedEvent>,
        now_ms: i64,
    ) -> Result<bool, RepositoryError> {
        if self.fanned_out_to != from {
            return Ok(false);
        }
        self.fanned_out_to = Some(to);
        for event in events {
            let takers: Vec<EndpointId> = self
                .endpoints
                .values()
                .map(|stored| &stored.endpoint)
                .filter(|endpoint| {
                    endpoint.is_enabled()
                        && endpoint.event_types.contains(event.event_type)
                        && endpoint.created_at_ms <= event.occurred_at_ms
                })
                .map(|endpoint| endpoint.id)
                .collect();
            for endpoint in takers {
                let already = self.deliveries.values().any(|stored| {
                    stored.delivery.endpoint_id == endpoint
                        && stored.delivery.event_id == event.event_id
                });
                if !already {
                    self.add(NewDelivery {
                        endpoint,
                        event_id: event.event_id.clone(),
                        event_type: event.event_type.as_str().to_owned(),
                        body: event.body.clone(),
                        now_ms,
                    })?;
                }
            }
        }
        Ok(true)
    }

    fn claim(&mut self, now_ms: i64, lease_ms: i64, max: usize) -> Vec<ClaimedDelivery> {
        let mut due: Vec<(i64, i64)> = self
            .deliveries
            .values()
            .filter(|stored| {
                stored.is_pending()
                    && stored
                        .delivery
                        .next_attempt_ms
                        .is_some_and(|next| next <= now_ms)
                    && stored.lease_until_ms.is_none_or(|until| until <= now_ms)
                    && self
                        .endpoints
                        .get(&stored.delivery.endpoint_id.get())
                        .is_some_and(|endpoint| endpoint.endpoint.is_enabled())
            })
            .map(|stored| {
                (
                    stored.delivery.next_attempt_ms.unwrap_or(now_ms),
                    stored.delivery.id.get(),
                )
            })
            .collect();
        due.sort_unstable();
        due.truncate(max);
        let lease_until_ms = now_ms.saturating_add(lease_ms);
        let mut claimed = Vec::with_capacity(due.len());
        for (_, id) in due {
            let (Some(stored), endpoints) = (self.deliveries.get_mut(&id), &self.endpoints) else {
                continue;
            };
            let Some(endpoint) = endpoints.get(&stored.delivery.endpoint_id.get()) else {
                continue;
            };
            stored.lease_until_ms = Some(lease_until_ms);
            stored.lease_token += 1;
            claimed.push(ClaimedDelivery {
                id: stored.delivery.id,
                endpoint: endpoint.endpoint.id,
                url: endpoint.endpoint.url.clone(),
                secret: endpoint.secret.clone(),
                previous_secret: endpoint
                    .previous
                    .as_ref()
                    .filter(|(_, expires)| *expires > now_ms)
                    .map(|(secret, _)| secret.clone()),
                event_id: stored.delivery.event_id.clone(),
                body: stored.body.clone(),
                attempts_made: u32::try_from(stored.delivery.attempts.len()).unwrap_or(u32::MAX),
                failing_since_ms: endpoint.failing_since_ms,
                lease_token: stored.lease_token,
                lease_until_ms,
            });
        }
        claimed
    }

    fn settle(&mut self, settlement: Settlement) -> bool {
        let Some(stored) = self.deliveries.get_mut(&settlement.delivery.get()) else {
            return false;
        };
        if stored.lease_token != settlement.lease_token || stored.lease_until_ms.is_none() {
            return false;
        }
        stored.lease_until_ms = None;
        stored.delivery.attempts.push(settlement.attempt.clone());
        let (status, failure, next) = match settlement.next {
            NextStep::Succeeded => (DeliveryStatus::Succeeded, None, None),
            NextStep::RetryAt(at) => (DeliveryStatus::Pending, None, Some(at)),
            NextStep::Failed(failure) => (DeliveryStatus::Failed, Some(failure), None),
        };
        stored.delivery.status = status;
        stored.delivery.failure = failure;
        stored.delivery.next_attempt_ms = next;
        let Some(endpoint) = self.endpoints.get_mut(&settlement.endpoint.get()) else {
            return true;
        };
        match settlement.health {
            EndpointHealth::Answering => endpoint.failing_since_ms = None,
            EndpointHealth::Failing { since_ms } => {
                endpoint.failing_since_ms.get_or_insert(since_ms);
            }
            EndpointHealth::Disable => {
                if endpoint.endpoint.disabled.is_none() {
                    endpoint.endpoint.disabled = Some(DisabledReason::Failing);
                    endpoint.endpoint.updated_at_ms = settlement.attempt.at_ms;
                }
            }
        }
        // Disabled meanwhile (or now): its pending deliveries, this one too, are failed.
        if !endpoint.endpoint.is_enabled() {
            self.fail_pending(settlement.endpoint);
        }
        true
    }

    fn purge_finished(&mut self, before_ms: i64, max: usize) -> u64 {
        let due: Vec<i64> = self
            .deliveries
            .values()
            .filter(|stored| !stored.is_pending() && stored.delivery.created_at_ms < before_ms)
            .map(|stored| stored.delivery.id.get())
            .take(max)
            .collect();
        for id in &due {
            self.deliveries.remove(id);
        }
        u64::try_from(due.len()).unwrap_or(u64::MAX)
    }
}

/// Webhook endpoints, deliveries and the delivery queue kept with the pets of one in-memory
/// store.
#[derive(Debug, Clone)]
pub struct InMemoryWebhooks {
    state: Arc<Mutex<State>>,
}

impl InMemoryWebhooks {
    /// The webhooks of `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl WebhookRepository for InMemoryWebhooks {
    async fn create(
        &self,
        endpoint: NewEndpoint,
        plan: Option<RecordPlan<CreatedEndpoint>>,
    ) -> Result<Written<CreatedEndpoint>, WebhookError> {
        self.state()
            .write_recorded(plan, |state| state.webhooks.create(endpoint))
    }

    async fn update(
        &self,
        id: EndpointId,
        change: EndpointChange,
        now_ms: i64,
        plan: Option<RecordPlan<WebhookEndpoint>>,
    ) -> Result<Written<WebhookEndpoint>, WebhookError> {
        self.state()
            .write_recorded(plan, |state| state.webhooks.update(id, change, now_ms))
    }

    async fn rotate_secret(
        &self,
        id: EndpointId,
        rotation: SecretRotation,
        plan: Option<RecordPlan<RotatedSecret>>,
    ) -> Result<Written<RotatedSecret>, WebhookError> {
        self.state()
            .write_recorded(plan, |state| state.webhooks.rotate(id, rotation))
    }

    async fn delete(&self, id: EndpointId) -> Result<(), WebhookError> {
        self.state().webhooks.delete(id)
    }

    async fn find(&self, id: EndpointId) -> Result<Option<WebhookEndpoint>, RepositoryError> {
        Ok(self
            .state()
            .webhooks
            .endpoints
            .get(&id.get())
            .map(|stored| stored.endpoint.clone()))
    }

    async fn list(
        &self,
        after: Option<EndpointId>,
        max: usize,
    ) -> Result<Vec<WebhookEndpoint>, RepositoryError> {
        let after = after.map_or(0, EndpointId::get);
        Ok(self
            .state()
            .webhooks
            .endpoints
            .range(after.saturating_add(1)..)
            .take(max)
            .map(|(_, stored)| stored.endpoint.clone())
            .collect())
    }

    async fn add_delivery(&self, delivery: NewDelivery) -> Result<Delivery, WebhookError> {
        let mut state = self.state();
        state.webhooks.enabled(delivery.endpoint)?;
        Ok(state.webhooks.add(delivery)?)
    }

    async fn deliveries(&self, query: DeliveryQuery) -> Result<Vec<Delivery>, WebhookError> {
        let mut state = self.state();
        state.webhooks.stored(query.endpoint)?;
        let before = query.before.map_or(i64::MAX, DeliveryId::get);
        Ok(state
            .webhooks
            .deliveries
            .range(..before)
            .rev()
            .map(|(_, stored)| &stored.delivery)
            .filter(|delivery| delivery.endpoint_id == query.endpoint)
            .filter(|delivery| query.status.is_none_or(|status| delivery.status == status))
            .take(query.max)
            .cloned()
            .collect())
    }

    async fn find_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
    ) -> Result<Option<Delivery>, RepositoryError> {
        Ok(self
            .state()
            .webhooks
            .delivery_of(endpoint, id)
            .map(|stored| stored.delivery.clone()))
    }

    async fn retry_delivery(
        &self,
        endpoint: EndpointId,
        id: DeliveryId,
        now_ms: i64,
    ) -> Result<Delivery, WebhookError> {
        self.state().webhooks.retry(endpoint, id, now_ms)
    }
}

#[async_trait]
impl DeliveryQueue for InMemoryWebhooks {
    async fn fanned_out_to(&self) -> Result<Option<FeedPosition>, RepositoryError> {
        Ok(self.state().webhooks.fanned_out_to)
    }

    async fn subscribed_types(&self) -> Result<Option<EventTypes>, RepositoryError> {
        let bits = self
            .state()
            .webhooks
            .endpoints
            .values()
            .map(|stored| &stored.endpoint)
            .filter(|endpoint| endpoint.is_enabled())
            .fold(0, |all, endpoint| all | endpoint.event_types.bits());
        Ok(EventTypes::from_bits(bits))
    }

    async fn fan_out(
        &self,
        from: Option<FeedPosition>,
        to: FeedPosition,
        events: Vec<FannedEvent>,
        now_ms: i64,
    ) -> Result<bool, RepositoryError> {
        let mut state = self.state();
        // All or nothing, as the SQL transaction: a failure leaves the state as it was.
        let before_position = state.webhooks.fanned_out_to;
        let before_last = state.webhooks.last_delivery_id;
        let outcome = state.webhooks.fan_out(from, to, events, now_ms);
        if outcome.is_err() {
            let webhooks = &mut state.webhooks;
            webhooks.fanned_out_to = before_position;
            webhooks.deliveries.retain(|id, _| *id <= before_last);
        }
        outcome
    }

    async fn claim(
        &self,
        _owner: &str,
        now_ms: i64,
        lease_ms: i64,
        max: usize,
    ) -> Result<Vec<ClaimedDelivery>, RepositoryError> {
        Ok(self.state().webhooks.claim(now_ms, lease_ms, max))
    }

    async fn settle(&self, settlement: Settlement) -> Result<bool, RepositoryError> {
        Ok(self.state().webhooks.settle(settlement))
    }

    async fn oldest_pending(&self) -> Result<Option<i64>, RepositoryError> {
        Ok(self
            .state()
            .webhooks
            .deliveries
            .values()
            .filter(|stored| stored.is_pending())
            .map(|stored| stored.delivery.created_at_ms)
            .min())
    }

    async fn purge_finished(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError> {
        Ok(self.state().webhooks.purge_finished(before_ms, max))
    }
}
