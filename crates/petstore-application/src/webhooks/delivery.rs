//! Delivering: fan the feed's events out to the endpoints that take them (one delivery per
//! event and endpoint), then make the attempts that are due, and decide what follows each
//! attempt (success, the next attempt on the schedule, giving up, disabling an endpoint that
//! has failed too long). A driver (the server's worker) calls the two rounds in a loop.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future;
use futures_util::stream::{self, StreamExt};
use petstore_domain::{
    Attempt, DeliveryFailure, DeliveryId, EndpointId, EventId, FeedPosition, RetrySchedule,
    VisibleOrders,
};

use super::ports::{
    ClaimedDelivery, DeliveryQueue, EndpointHealth, EventBody, FannedEvent, NextStep, Outgoing,
    SecretVault, SendOutcome, Settlement, WebhookSender,
};
use crate::clock::{unix_millis, Clock};
use crate::events::{EventFeed, FeedQuery, FeedReadError};
use crate::storage::RepositoryError;

/// How deliveries are made.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub schedule: RetrySchedule,
    /// How long an endpoint may fail every attempt before it is disabled.
    pub disable_after: Duration,
    /// How long a claimed delivery is this instance's; longer than an attempt's deadline.
    pub lease: Duration,
    /// An attempt's deadline, as the sender keeps it: none starts with less lease left.
    pub attempt_timeout: Duration,
    /// How many endpoints are sent to at once (each endpoint's deliveries one after another).
    pub concurrency: usize,
    /// How many deliveries one round claims.
    pub claim_batch: usize,
    /// How many events one fan-out round reads.
    pub fan_out_batch: usize,
    /// This instance's name on its leases.
    pub owner: String,
}

/// What one attempt came to, for the driver's logs and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    pub delivery: DeliveryId,
    pub endpoint: EndpointId,
    pub event_id: EventId,
    pub host: String,
    pub attempt: Attempt,
    pub next: NextStep,
    pub health: EndpointHealth,
    /// `false`: the lease had run out and another instance took the delivery; nothing of this
    /// attempt was recorded.
    pub recorded: bool,
}

/// What one delivery round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryRound {
    pub claimed: usize,
    pub attempts: Vec<AttemptReport>,
    /// Deliveries whose secret could not be opened (the key secret changed): left to their
    /// lease, attempted again after it.
    pub unopenable: Vec<DeliveryId>,
}

/// The delivery use cases over the feed, the queue, the vault, the renderer, the sender and
/// the clock.
#[derive(Clone)]
pub struct DeliveryService {
    feed: Arc<dyn EventFeed>,
    queue: Arc<dyn DeliveryQueue>,
    vault: Arc<dyn SecretVault>,
    bodies: Arc<dyn EventBody>,
    sender: Arc<dyn WebhookSender>,
    clock: Arc<dyn Clock>,
    settings: DeliverySettings,
}

impl std::fmt::Debug for DeliveryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryService")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl DeliveryService {
    pub fn new(
        feed: Arc<dyn EventFeed>,
        queue: Arc<dyn DeliveryQueue>,
        vault: Arc<dyn SecretVault>,
        bodies: Arc<dyn EventBody>,
        sender: Arc<dyn WebhookSender>,
        clock: Arc<dyn Clock>,
        settings: DeliverySettings,
    ) -> Self {
        Self {
            feed,
            queue,
            vault,
            bodies,
            sender,
            clock,
            settings,
        }
    }

    pub fn settings(&self) -> &DeliverySettings {
        &self.settings
    }

    fn now_ms(&self) -> i64 {
        unix_millis(self.clock.now())
    }

    /// Reads the next events of the feed after the position deliveries were made up to and
    /// adds their deliveries, moving the position; how many events it read (as many as a round
    /// reads: more may follow). Events purged before they were fanned out are skipped: the
    /// round starts again at the oldest event kept. The first round on a database only sets
    /// the position, to the feed's head.
    pub async fn fan_out_round(&self) -> Result<usize, RepositoryError> {
        let Some(from) = self.queue.fanned_out_to().await? else {
            // The first round on a database starts at the feed's head: endpoints receive the
            // events written after they were created, and a database filled by an import or
            // with history is not delivered again.
            let head = self.feed.head().await?.unwrap_or(FeedPosition::START);
            self.queue
                .fan_out(None, head, Vec::new(), self.now_ms())
                .await?;
            return Ok(0);
        };
        let from = Some(from);
        // The head is read before the endpoints: an endpoint enabled after that read takes
        // only events written after it, which lie beyond this head.
        let head = self.feed.head().await?;
        let Some(types) = self.queue.subscribed_types().await? else {
            // No endpoint takes anything: nothing is read or rendered, the position moves on.
            if let Some(head) = head.filter(|head| Some(*head) > from) {
                self.queue
                    .fan_out(from, head, Vec::new(), self.now_ms())
                    .await?;
            }
            return Ok(0);
        };
        let query = |after| FeedQuery {
            after,
            types,
            visible: VisibleOrders::All,
            max: self.settings.fan_out_batch,
        };
        let read = match self.feed.read(query(from)).await {
            Ok(read) => read,
            Err(FeedReadError::Gone) => {
                self.feed
                    .read(query(None))
                    .await
                    .map_err(|error| match error {
                        FeedReadError::Repository(error) => error,
                        FeedReadError::Gone => RepositoryError::Unexpected(
                            "the event feed is gone from its oldest event".into(),
                        ),
                    })?
            }
            Err(FeedReadError::Repository(error)) => return Err(error),
        };
        let count = read.entries.len();
        let last = read.entries.last().map(|entry| entry.position);
        // A short read saw every event of these types up to the head (read before it), so the
        // position may pass the head's events of other types too; a full one stops at its last.
        let to = if count < self.settings.fan_out_batch {
            last.max(head)
        } else {
            last
        };
        let Some(to) = to.filter(|to| Some(*to) > from) else {
            return Ok(0);
        };
        let events = read
            .entries
            .into_iter()
            .map(|entry| FannedEvent {
                position: entry.position,
                body: self.bodies.event(&entry.event),
                event_id: entry.event.id().clone(),
                event_type: entry.event.event_type(),
                occurred_at_ms: entry.event.occurred_at_ms(),
            })
            .collect();
        // `false`: another instance fanned these out first; the next round reads on from there.
        self.queue.fan_out(from, to, events, self.now_ms()).await?;
        Ok(count)
    }

    /// Claims the deliveries due now and makes one attempt of each: endpoints in parallel up to
    /// the concurrency, each endpoint's deliveries one after another.
    pub async fn deliver_round(&self) -> Result<DeliveryRound, RepositoryError> {
        let claimed = self
            .queue
            .claim(
                &self.settings.owner,
                self.now_ms(),
                millis(self.settings.lease),
                self.settings.claim_batch,
            )
            .await?;
        let mut round = DeliveryRound {
            claimed: claimed.len(),
            ..DeliveryRound::default()
        };
        let mut by_endpoint: Vec<Vec<ClaimedDelivery>> = Vec::new();
        for delivery in claimed {
            match by_endpoint
                .iter_mut()
                .find(|group| group[0].endpoint == delivery.endpoint)
            {
                Some(group) => group.push(delivery),
                None => by_endpoint.push(vec![delivery]),
            }
        }
        let outcomes: Vec<Vec<Result<AttemptReport, DeliveryId>>> = stream::iter(by_endpoint)
            .map(|group| self.attempt_in_turn(group))
            .buffer_unordered(self.settings.concurrency.max(1))
            .collect()
            .await;
        for outcome in outcomes.into_iter().flatten() {
            match outcome {
                Ok(report) => round.attempts.push(report),
                Err(id) => round.unopenable.push(id),
            }
        }
        Ok(round)
    }

    /// One endpoint's claimed deliveries, attempted one after another; each attempt is
    /// recorded while the next is sent. Stops when the lease is too short for another attempt,
    /// or once the endpoint is disabled.
    async fn attempt_in_turn(
        &self,
        group: Vec<ClaimedDelivery>,
    ) -> Vec<Result<AttemptReport, DeliveryId>> {
        let mut reports = Vec::with_capacity(group.len());
        // The claim's view of the endpoint's failing is stale once an attempt of the round has
        // answered for it.
        let mut failing_since = None;
        let mut unrecorded = None;
        for mut delivery in group {
            if let Some(since) = failing_since {
                delivery.failing_since_ms = since;
            }
            let (recorded, attempted) =
                future::join(self.record(unrecorded.take()), self.attempt(delivery)).await;
            reports.extend(recorded.map(Ok));
            let concluded = match attempted {
                None => break,
                Some(Err(unopenable)) => {
                    reports.push(Err(unopenable));
                    continue;
                }
                Some(Ok(concluded)) => concluded,
            };
            let health = concluded.0.health;
            unrecorded = Some(concluded);
            match health {
                EndpointHealth::Answering => failing_since = Some(None),
                EndpointHealth::Failing { since_ms } => failing_since = Some(Some(since_ms)),
                // A disabled endpoint is sent nothing more.
                EndpointHealth::Disable => break,
            }
        }
        reports.extend(self.record(unrecorded).await.map(Ok));
        reports
    }

    /// Records a concluded attempt; its report, saying whether it was recorded.
    async fn record(
        &self,
        concluded: Option<(AttemptReport, Settlement)>,
    ) -> Option<AttemptReport> {
        let (mut report, settlement) = concluded?;
        report.recorded = self.queue.settle(settlement).await.unwrap_or(false);
        Some(report)
    }

    /// One attempt of a claimed delivery, and what to record of it; `None` when too little of
    /// its lease is left to start one (it is attempted after the lease runs out, by whoever
    /// claims it then).
    async fn attempt(
        &self,
        delivery: ClaimedDelivery,
    ) -> Option<Result<(AttemptReport, Settlement), DeliveryId>> {
        let started = self.now_ms();
        if started.saturating_add(millis(self.settings.attempt_timeout)) >= delivery.lease_until_ms
        {
            return None;
        }
        let secrets = std::iter::once(&delivery.secret)
            .chain(delivery.previous_secret.as_ref())
            .map(|sealed| self.vault.open(sealed))
            .collect::<Result<Vec<_>, _>>();
        let Ok(secrets) = secrets else {
            return Some(Err(delivery.id));
        };
        let outgoing = Outgoing {
            url: delivery.url.clone(),
            webhook_id: delivery.event_id.clone(),
            timestamp_s: started / 1000,
            secrets,
            body: delivery.body.clone(),
        };
        let outcome = self.sender.send(outgoing).await;
        let attempt = Attempt {
            number: delivery.attempts_made + 1,
            at_ms: started,
            status_code: outcome.status_code,
            latency_ms: outcome.latency_ms,
            error: outcome.error,
        };
        let (next, health) = self.decide(&delivery, &outcome, self.now_ms());
        let settlement = Settlement {
            delivery: delivery.id,
            endpoint: delivery.endpoint,
            lease_token: delivery.lease_token,
            attempt: attempt.clone(),
            next,
            health,
        };
        let report = AttemptReport {
            delivery: delivery.id,
            endpoint: delivery.endpoint,
            event_id: delivery.event_id,
            host: delivery.url.host().to_string(),
            attempt,
            next,
            health,
            recorded: false,
        };
        Some(Ok((report, settlement)))
    }

    /// What follows an attempt: success clears the endpoint's failing; a failure schedules the
    /// next attempt (no sooner than a `Retry-After`, no later than twice the scheduled wait),
    /// or gives up after the last; an endpoint failing for longer than `disable_after` is
    /// disabled.
    fn decide(
        &self,
        delivery: &ClaimedDelivery,
        outcome: &SendOutcome,
        now_ms: i64,
    ) -> (NextStep, EndpointHealth) {
        if outcome.error.is_none() {
            return (NextStep::Succeeded, EndpointHealth::Answering);
        }
        let health = match delivery.failing_since_ms {
            Some(since) if now_ms.saturating_sub(since) >= millis(self.settings.disable_after) => {
                return (
                    NextStep::Failed(DeliveryFailure::EndpointDisabled),
                    EndpointHealth::Disable,
                )
            }
            Some(since) => EndpointHealth::Failing { since_ms: since },
            None => EndpointHealth::Failing { since_ms: now_ms },
        };
        let next = match self
            .settings
            .schedule
            .wait_after(delivery.attempts_made + 1)
        {
            Some(wait) => {
                let wait = match outcome.retry_after_s {
                    Some(seconds) => Duration::from_secs(seconds).clamp(wait, wait * 2),
                    None => wait,
                };
                NextStep::RetryAt(now_ms.saturating_add(millis(wait)))
            }
            None => NextStep::Failed(DeliveryFailure::Exhausted),
        };
        (next, health)
    }

    /// When the oldest delivery still pending was added.
    pub async fn oldest_pending(&self) -> Result<Option<i64>, RepositoryError> {
        self.queue.oldest_pending().await
    }

    /// Deletes at most `max` finished deliveries added more than `retention` ago.
    pub async fn purge_finished(
        &self,
        retention: Duration,
        max: usize,
    ) -> Result<u64, RepositoryError> {
        let before = self.now_ms().saturating_sub(millis(retention));
        self.queue.purge_finished(before, max).await
    }
}
