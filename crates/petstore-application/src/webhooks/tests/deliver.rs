//! `DeliveryService::deliver_round`: what a claimed delivery is sent with, what each outcome
//! settles, which deliveries are not sent, and how the sends of one round overlap.

use std::collections::HashMap;
use std::sync::Mutex;

use petstore_domain::{Attempt, AttemptError, DeliveryFailure, RetrySchedule};

use super::*;
use crate::events::MockEventFeed;

const SECOND: i64 = 1_000;
const HOUR: i64 = 60 * 60 * SECOND;

/// A short schedule: the first attempt at once, then 5 s and 60 s after each failure.
pub(super) fn settings() -> DeliverySettings {
    DeliverySettings {
        schedule: RetrySchedule::parse([0, 5, 60].into_iter().map(Duration::from_secs).collect())
            .unwrap(),
        disable_after: Duration::from_secs(5 * 60 * 60),
        lease: Duration::from_secs(60),
        attempt_timeout: Duration::from_secs(15),
        concurrency: 2,
        claim_batch: 10,
        fan_out_batch: 200,
        owner: "instance-a".to_owned(),
    }
}

fn host(endpoint: i64) -> String {
    format!("hooks{endpoint}.example")
}

/// A delivery of `endpoint` claimed now, never attempted, its endpoint not failing.
fn claimed(id: i64, endpoint: i64) -> ClaimedDelivery {
    ClaimedDelivery {
        id: delivery_id(id),
        endpoint: endpoint_id(endpoint),
        url: url(&host(endpoint)),
        secret: SealedSecret("sealed-current".to_owned()),
        previous_secret: None,
        event_id: event_id(u8::try_from(id).unwrap()),
        body: format!("{{\"delivery\":{id}}}").into_bytes(),
        attempts_made: 0,
        failing_since_ms: None,
        lease_token: 100 + id,
        lease_until_ms: NOW_MS + 60 * SECOND,
    }
}

fn answered(status_code: u16) -> SendOutcome {
    SendOutcome {
        status_code: Some(status_code),
        latency_ms: 35,
        error: (!(200..300).contains(&status_code)).then_some(AttemptError::Status),
        retry_after_s: None,
    }
}

fn retry_after(seconds: u64) -> SendOutcome {
    SendOutcome {
        retry_after_s: Some(seconds),
        ..answered(503)
    }
}

/// A vault that opens `sealed-NAME` as `whsec_NAME`, and nothing else.
fn vault() -> MockSecretVault {
    let mut vault = MockSecretVault::new();
    vault.expect_open().returning(|sealed| {
        sealed
            .0
            .strip_prefix("sealed-")
            .map(secret)
            .ok_or(SealError)
    });
    vault
}

fn service(queue: MockDeliveryQueue, sender: Arc<dyn WebhookSender>) -> DeliveryService {
    service_with(queue, sender, settings())
}

fn service_with(
    queue: MockDeliveryQueue,
    sender: Arc<dyn WebhookSender>,
    settings: DeliverySettings,
) -> DeliveryService {
    DeliveryService::new(
        Arc::new(MockEventFeed::new()),
        Arc::new(queue),
        Arc::new(vault()),
        Arc::new(MockEventBody::new()),
        sender,
        clock(),
        settings,
    )
}

/// A queue that hands out `deliveries` and keeps every settlement, answering `recorded`.
fn queue(
    deliveries: Vec<ClaimedDelivery>,
    recorded: bool,
) -> (MockDeliveryQueue, Arc<Mutex<Vec<Settlement>>>) {
    let mut queue = MockDeliveryQueue::new();
    queue
        .expect_claim()
        .times(1)
        .return_once(move |_, _, _, _| Ok(deliveries));
    let settled = keeping_settlements(&mut queue, recorded);
    (queue, settled)
}

/// Keeps every settlement `queue` is given, answering `recorded`.
fn keeping_settlements(
    queue: &mut MockDeliveryQueue,
    recorded: bool,
) -> Arc<Mutex<Vec<Settlement>>> {
    let settled = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&settled);
    queue.expect_settle().returning(move |settlement| {
        kept.lock().unwrap().push(settlement);
        Ok(recorded)
    });
    settled
}

/// A sender answering each delivery's body with its outcome.
fn sender(outcomes: Vec<(ClaimedDelivery, SendOutcome)>) -> Arc<MockWebhookSender> {
    let mut sender = MockWebhookSender::new();
    sender.expect_send().returning(move |outgoing| {
        outcomes
            .iter()
            .find(|(delivery, _)| delivery.body == outgoing.body)
            .map(|(_, outcome)| *outcome)
            .unwrap()
    });
    Arc::new(sender)
}

/// One round over one delivery answered with `outcome`: its settlement.
async fn settle_one(delivery: ClaimedDelivery, outcome: SendOutcome) -> Settlement {
    let (queue, settled) = queue(vec![delivery.clone()], true);
    let round = service(queue, sender(vec![(delivery, outcome)]))
        .deliver_round()
        .await
        .unwrap();
    assert_eq!(round.attempts.len(), 1, "{round:?}");
    let mut settled = settled.lock().unwrap();
    assert_eq!(settled.len(), 1);
    settled.remove(0)
}

#[tokio::test]
async fn a_claimed_delivery_is_sent_signed_with_both_secrets_and_settled_as_succeeded() {
    let delivery = ClaimedDelivery {
        previous_secret: Some(SealedSecret("sealed-previous".to_owned())),
        ..claimed(4, 1)
    };
    let mut queue = MockDeliveryQueue::new();
    queue
        .expect_claim()
        .withf(|owner, now_ms, lease_ms, max| {
            owner == "instance-a" && *now_ms == NOW_MS && *lease_ms == 60 * SECOND && *max == 10
        })
        .times(1)
        .return_once({
            let delivery = delivery.clone();
            move |_, _, _, _| Ok(vec![delivery])
        });
    let settled = keeping_settlements(&mut queue, true);
    let mut sender = MockWebhookSender::new();
    sender
        .expect_send()
        .withf(|outgoing| {
            *outgoing
                == Outgoing {
                    url: url("hooks1.example"),
                    webhook_id: event_id(4),
                    timestamp_s: 1_800_000_000,
                    secrets: vec![secret("current"), secret("previous")],
                    body: b"{\"delivery\":4}".to_vec(),
                }
        })
        .times(1)
        .returning(|_| answered(204));

    let round = service(queue, Arc::new(sender))
        .deliver_round()
        .await
        .unwrap();

    let attempt = Attempt {
        number: 1,
        at_ms: NOW_MS,
        status_code: Some(204),
        latency_ms: 35,
        error: None,
    };
    assert_eq!(
        *settled.lock().unwrap(),
        [Settlement {
            delivery: delivery_id(4),
            endpoint: endpoint_id(1),
            lease_token: 104,
            attempt: attempt.clone(),
            next: NextStep::Succeeded,
            health: EndpointHealth::Answering,
        }]
    );
    assert_eq!(
        round,
        DeliveryRound {
            claimed: 1,
            attempts: vec![AttemptReport {
                delivery: delivery_id(4),
                endpoint: endpoint_id(1),
                event_id: event_id(4),
                host: "hooks1.example".to_owned(),
                attempt,
                next: NextStep::Succeeded,
                health: EndpointHealth::Answering,
                recorded: true,
            }],
            unopenable: Vec::new(),
        }
    );
}

#[tokio::test]
async fn a_first_failure_is_retried_after_the_next_wait_and_starts_the_endpoint_failing() {
    let settlement = settle_one(claimed(4, 1), answered(500)).await;
    assert_eq!(settlement.attempt.number, 1);
    assert_eq!(settlement.attempt.status_code, Some(500));
    assert_eq!(settlement.attempt.error, Some(AttemptError::Status));
    assert_eq!(settlement.next, NextStep::RetryAt(NOW_MS + 5 * SECOND));
    assert_eq!(
        settlement.health,
        EndpointHealth::Failing { since_ms: NOW_MS }
    );
}

#[tokio::test]
async fn a_failure_of_a_failing_endpoint_keeps_when_it_started_failing() {
    let delivery = ClaimedDelivery {
        attempts_made: 1,
        failing_since_ms: Some(NOW_MS - HOUR),
        ..claimed(4, 1)
    };
    let settlement = settle_one(delivery, answered(500)).await;
    assert_eq!(settlement.attempt.number, 2);
    assert_eq!(settlement.next, NextStep::RetryAt(NOW_MS + 60 * SECOND));
    assert_eq!(
        settlement.health,
        EndpointHealth::Failing {
            since_ms: NOW_MS - HOUR
        }
    );
}

#[tokio::test]
async fn the_last_scheduled_attempt_failing_fails_the_delivery_as_exhausted() {
    let delivery = ClaimedDelivery {
        attempts_made: 2,
        failing_since_ms: Some(NOW_MS - HOUR),
        ..claimed(4, 1)
    };
    let settlement = settle_one(delivery, answered(500)).await;
    assert_eq!(settlement.attempt.number, 3);
    assert_eq!(
        settlement.next,
        NextStep::Failed(DeliveryFailure::Exhausted)
    );
    assert_eq!(
        settlement.health,
        EndpointHealth::Failing {
            since_ms: NOW_MS - HOUR
        }
    );
}

#[tokio::test]
async fn a_manual_retry_of_an_exhausted_delivery_makes_one_attempt_more() {
    let delivery = ClaimedDelivery {
        attempts_made: 3,
        failing_since_ms: Some(NOW_MS - HOUR),
        ..claimed(4, 1)
    };
    let settlement = settle_one(delivery.clone(), answered(500)).await;
    assert_eq!(settlement.attempt.number, 4);
    assert_eq!(
        settlement.next,
        NextStep::Failed(DeliveryFailure::Exhausted)
    );

    let settlement = settle_one(delivery, answered(200)).await;
    assert_eq!(settlement.next, NextStep::Succeeded);
}

#[tokio::test]
async fn an_endpoint_failing_longer_than_disable_after_is_disabled() {
    let failing_since = |since_ms| ClaimedDelivery {
        attempts_made: 1,
        failing_since_ms: Some(since_ms),
        ..claimed(4, 1)
    };

    let settlement = settle_one(failing_since(NOW_MS - 5 * HOUR), answered(500)).await;
    assert_eq!(
        settlement.next,
        NextStep::Failed(DeliveryFailure::EndpointDisabled)
    );
    assert_eq!(settlement.health, EndpointHealth::Disable);

    let settlement = settle_one(failing_since(NOW_MS - 5 * HOUR + 1), answered(500)).await;
    assert_eq!(settlement.next, NextStep::RetryAt(NOW_MS + 60 * SECOND));
    assert_eq!(
        settlement.health,
        EndpointHealth::Failing {
            since_ms: NOW_MS - 5 * HOUR + 1
        }
    );
}

#[tokio::test]
async fn a_success_of_a_failing_endpoint_clears_its_failing() {
    let delivery = ClaimedDelivery {
        attempts_made: 1,
        failing_since_ms: Some(NOW_MS - 6 * HOUR),
        ..claimed(4, 1)
    };
    let settlement = settle_one(delivery, answered(200)).await;
    assert_eq!(settlement.next, NextStep::Succeeded);
    assert_eq!(settlement.health, EndpointHealth::Answering);
}

#[tokio::test]
async fn retry_after_is_kept_between_the_scheduled_wait_and_twice_it() {
    // After the second attempt the schedule waits 60 s.
    let second_attempt = || ClaimedDelivery {
        attempts_made: 1,
        ..claimed(4, 1)
    };
    for (asked, waited) in [(10, 60), (90, 90), (600, 120)] {
        let settlement = settle_one(second_attempt(), retry_after(asked)).await;
        assert_eq!(
            settlement.next,
            NextStep::RetryAt(NOW_MS + waited * SECOND),
            "Retry-After: {asked}"
        );
    }
}

#[tokio::test]
async fn a_delivery_whose_secret_cannot_be_opened_is_not_sent_and_is_reported() {
    let unopenable = ClaimedDelivery {
        previous_secret: Some(SealedSecret("under-another-key".to_owned())),
        ..claimed(4, 1)
    };
    let mut queue = MockDeliveryQueue::new();
    queue
        .expect_claim()
        .return_once(|_, _, _, _| Ok(vec![unopenable, claimed(5, 2)]));
    queue
        .expect_settle()
        .withf(|settlement| settlement.delivery == delivery_id(5))
        .times(1)
        .returning(|_| Ok(true));
    let mut sender = MockWebhookSender::new();
    sender
        .expect_send()
        .withf(|outgoing| outgoing.webhook_id == event_id(5))
        .times(1)
        .returning(|_| answered(200));

    let round = service(queue, Arc::new(sender))
        .deliver_round()
        .await
        .unwrap();
    assert_eq!(round.claimed, 2);
    assert_eq!(round.unopenable, [delivery_id(4)]);
    assert_eq!(
        round
            .attempts
            .iter()
            .map(|report| report.delivery)
            .collect::<Vec<_>>(),
        [delivery_id(5)]
    );
}

#[tokio::test]
async fn a_delivery_with_less_lease_left_than_an_attempt_takes_is_not_sent() {
    let short = ClaimedDelivery {
        lease_until_ms: NOW_MS + 10 * SECOND,
        ..claimed(4, 1)
    };
    let (queue, settled) = queue(vec![short, claimed(5, 2)], true);
    let mut sender = MockWebhookSender::new();
    sender
        .expect_send()
        .withf(|outgoing| outgoing.webhook_id == event_id(5))
        .times(1)
        .returning(|_| answered(200));

    let round = service(queue, Arc::new(sender))
        .deliver_round()
        .await
        .unwrap();
    assert_eq!(round.claimed, 2);
    assert!(round.unopenable.is_empty());
    let settled: Vec<DeliveryId> = settled
        .lock()
        .unwrap()
        .iter()
        .map(|settlement| settlement.delivery)
        .collect();
    assert_eq!(settled, [delivery_id(5)]);
    assert_eq!(round.attempts.len(), 1);
    assert_eq!(round.attempts[0].delivery, delivery_id(5));
}

#[tokio::test]
async fn an_attempt_whose_lease_was_taken_over_is_reported_as_not_recorded() {
    let (queue, settled) = queue(vec![claimed(4, 1)], false);
    let round = service(queue, sender(vec![(claimed(4, 1), answered(200))]))
        .deliver_round()
        .await
        .unwrap();
    assert_eq!(settled.lock().unwrap().len(), 1);
    assert_eq!(round.attempts.len(), 1);
    assert!(!round.attempts[0].recorded);
    assert_eq!(round.attempts[0].next, NextStep::Succeeded);
}

/// A sender that answers 200 after yielding a few times, counting the sends in flight, in all
/// and per URL, and the order each URL was sent its bodies in.
#[derive(Default)]
struct CountingSender {
    state: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    in_flight: usize,
    most_in_flight: usize,
    in_flight_per_url: HashMap<String, usize>,
    most_in_flight_per_url: HashMap<String, usize>,
    bodies_per_url: HashMap<String, Vec<Vec<u8>>>,
}

#[async_trait::async_trait]
impl WebhookSender for CountingSender {
    async fn send(&self, outgoing: Outgoing) -> SendOutcome {
        let url = outgoing.url.as_str().to_owned();
        {
            let mut counts = self.state.lock().unwrap();
            counts.in_flight += 1;
            counts.most_in_flight = counts.most_in_flight.max(counts.in_flight);
            let per_url = counts.in_flight_per_url.entry(url.clone()).or_default();
            *per_url += 1;
            let now = *per_url;
            let most = counts
                .most_in_flight_per_url
                .entry(url.clone())
                .or_default();
            *most = (*most).max(now);
            counts
                .bodies_per_url
                .entry(url.clone())
                .or_default()
                .push(outgoing.body);
        }
        // Gives the round's other sends the chance to start meanwhile, as a request's network
        // waits do.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        let mut counts = self.state.lock().unwrap();
        counts.in_flight -= 1;
        *counts.in_flight_per_url.get_mut(&url).unwrap() -= 1;
        answered(200)
    }
}

#[tokio::test]
async fn one_endpoint_is_sent_one_delivery_at_a_time_and_endpoints_up_to_the_concurrency() {
    let deliveries = vec![
        claimed(1, 1),
        claimed(3, 1),
        claimed(2, 2),
        claimed(4, 3),
        claimed(5, 1),
    ];
    let (queue, settled) = queue(deliveries, true);
    let sender = Arc::new(CountingSender::default());

    let round = service(queue, Arc::clone(&sender) as Arc<dyn WebhookSender>)
        .deliver_round()
        .await
        .unwrap();

    assert_eq!(round.attempts.len(), 5);
    assert_eq!(settled.lock().unwrap().len(), 5);
    let counts = sender.state.lock().unwrap();
    assert_eq!(counts.most_in_flight, 2, "the concurrency is 2");
    let first = url(&host(1)).as_str().to_owned();
    assert_eq!(counts.most_in_flight_per_url[&first], 1);
    assert_eq!(
        counts.bodies_per_url[&first],
        [claimed(1, 1).body, claimed(3, 1).body, claimed(5, 1).body],
        "in the order they were claimed"
    );
}

#[tokio::test]
async fn a_success_earlier_in_the_round_clears_the_failing_a_later_failure_starts_from() {
    let failing_since_an_hour = |id| ClaimedDelivery {
        attempts_made: 1,
        failing_since_ms: Some(NOW_MS - HOUR),
        ..claimed(id, 1)
    };
    let (queue, settled) = queue(
        vec![failing_since_an_hour(4), failing_since_an_hour(5)],
        true,
    );
    let sender = sender(vec![
        (failing_since_an_hour(4), answered(200)),
        (failing_since_an_hour(5), answered(500)),
    ]);

    service(queue, sender).deliver_round().await.unwrap();

    let settled = settled.lock().unwrap();
    assert_eq!(settled.len(), 2);
    assert_eq!(settled[0].health, EndpointHealth::Answering);
    assert_eq!(
        settled[1].health,
        EndpointHealth::Failing { since_ms: NOW_MS },
        "the endpoint answered a moment before"
    );
}

#[tokio::test]
async fn an_endpoint_disabled_in_a_round_is_sent_nothing_more() {
    let failing_for_long = |id| ClaimedDelivery {
        attempts_made: 1,
        failing_since_ms: Some(NOW_MS - 6 * HOUR),
        ..claimed(id, 1)
    };
    let (queue, settled) = queue(vec![failing_for_long(4), failing_for_long(5)], true);
    let mut sender = MockWebhookSender::new();
    sender.expect_send().times(1).returning(|_| answered(500));

    let round = service(queue, Arc::new(sender))
        .deliver_round()
        .await
        .unwrap();

    assert_eq!(round.attempts.len(), 1);
    let settled = settled.lock().unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].health, EndpointHealth::Disable);
}

#[tokio::test]
async fn finished_deliveries_older_than_the_retention_are_purged() {
    let mut queue = MockDeliveryQueue::new();
    queue
        .expect_purge_finished()
        .withf(|before_ms, max| *before_ms == NOW_MS - HOUR && *max == 500)
        .times(1)
        .returning(|_, _| Ok(500));
    let deleted = service(queue, Arc::new(MockWebhookSender::new()))
        .purge_finished(Duration::from_secs(60 * 60), 500)
        .await
        .unwrap();
    assert_eq!(deleted, 500);
}
