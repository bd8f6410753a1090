//! The webhook storage contract, written once and run against every adapter (memory, a SQLite
//! file, a PostgreSQL database of its own per test): endpoints and the most a store keeps, the
//! fan-out of the feed to the endpoints that take each event (once, however many instances
//! race), claims that never hand one delivery to two claimers, leases taken over once they run
//! out, settlements and the endpoint's health, disabling, retries, deletion and the purge; and
//! the feed's head.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use common::{done, new_pet, Fixture};
use futures_util::future::join_all;
use petstore_application::webhooks::CreatedEndpoint;
use petstore_application::webhooks::{
    ClaimedDelivery, DeliveryQuery, EndpointChange, EndpointHealth, FannedEvent, NewDelivery,
    NewEndpoint, NextStep, SealedSecret, SecretRotation, Settlement,
};
use petstore_application::{
    DeliveryQueue, FeedQuery, Fingerprint, RecordPlan, StoredResponse, WebhookError,
    WebhookRepository, Written,
};
use petstore_domain::{
    AddressPolicy, Attempt, AttemptError, Delivery, DeliveryFailure, DeliveryId, DeliveryStatus,
    DisabledReason, EndpointId, EventId, EventType, EventTypes, FeedEntry, FeedPosition,
    SigningSecret, VisibleOrders, WebhookEndpoint, WebhookUrl, MAX_WEBHOOK_ENDPOINTS,
};
use petstore_test_database::eventually;

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    endpoints_are_created_found_listed_changed_and_deleted,
    at_most_the_limit_of_endpoints_is_kept_also_when_created_at_once,
    fan_out_delivers_each_event_to_the_enabled_endpoints_that_take_it,
    fan_out_moves_the_position_only_from_where_it_is,
    racing_fan_outs_add_each_delivery_once,
    concurrent_claimers_never_share_a_delivery,
    a_claim_takes_due_deliveries_of_enabled_endpoints_oldest_due_first,
    an_expired_lease_is_taken_over_and_the_stale_settlement_records_nothing,
    settling_records_the_attempt_and_the_endpoints_health,
    a_failing_endpoint_disabled_fails_its_pending_deliveries,
    disabling_by_hand_fails_pending_deliveries_and_enabling_starts_afresh,
    a_retry_makes_a_delivery_due_now_unless_it_is_in_flight,
    a_rotated_secret_keeps_signing_until_it_expires,
    deliveries_are_listed_newest_first_by_status_and_page,
    deleting_an_endpoint_deletes_its_deliveries,
    the_purge_deletes_only_old_finished_deliveries_and_is_bounded,
    the_feed_head_is_the_newest_readable_event,
    an_attempt_settled_after_its_endpoint_was_disabled_leaves_the_delivery_failed,
    a_keyed_create_is_answered_from_its_record_also_in_place_of_too_many,
    the_subscribed_types_are_those_of_the_enabled_endpoints,
);

/// An export carries the endpoints with their sealed secrets, not their deliveries nor the
/// fan-out position (they belong to the source's feed); a forced import replaces them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_carries_the_endpoints_and_a_forced_import_drops_the_deliveries() {
    let source = common::sqlite();
    let (repo, queue) = (source.webhooks_arc(), source.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let events = vec![event(1, EventType::PetCreated, T)];
    assert!(queue.fan_out(None, at(1), events, T).await.expect("ok"));
    let settings = petstore_persistence::PoolSettings::default();
    let source_url = common::parse(source.url());
    let exported = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        petstore_persistence::export(&source_url, &settings, "kid", &mut out).expect("exported");
        out
    })
    .await
    .expect("joined");

    let target = common::sqlite();
    let (target_repo, target_queue) = (target.webhooks_arc(), target.deliveries_arc());
    let other = create(target_repo.as_ref(), "other.example.com", "pet.*", true, T).await;
    ping(target_repo.as_ref(), other.id, 7, T).await;
    assert!(target_queue
        .fan_out(None, at(9), Vec::new(), T)
        .await
        .expect("ok"));
    let target_url = common::parse(target.url());
    tokio::task::spawn_blocking(move || {
        let options = petstore_persistence::ImportOptions {
            key_id: "kid",
            accept_other_key_id: false,
            force: true,
        };
        petstore_persistence::import(&target_url, &settings, &options, &mut exported.as_slice())
            .expect("imported");
    })
    .await
    .expect("joined");

    assert_eq!(
        target_repo.list(None, 10).await.expect("listed"),
        std::slice::from_ref(&endpoint)
    );
    assert!(deliveries_of(target_repo.as_ref(), endpoint.id)
        .await
        .is_empty());
    assert_eq!(target_queue.fanned_out_to().await.expect("read"), None);
    ping(target_repo.as_ref(), endpoint.id, 2, T).await;
    let claimed = claim(target_queue.as_ref(), T, 10).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        claimed[0].secret,
        SealedSecret("sealed:a.example.com".to_owned())
    );
}

/// A time all the tests' times are after (milliseconds since the epoch).
const T: i64 = 1_800_000_000_000;
const LEASE_MS: i64 = 60_000;

fn url(host: &str) -> WebhookUrl {
    WebhookUrl::parse(&format!("https://{host}/hooks"), AddressPolicy::default()).expect("a url")
}

fn types(raw: &str) -> EventTypes {
    EventTypes::parse_list(raw).expect("types")
}

fn new_endpoint(host: &str, event_types: &str, enabled: bool, now_ms: i64) -> NewEndpoint {
    NewEndpoint {
        url: url(host),
        event_types: types(event_types),
        enabled,
        secret: SigningSecret::new(format!("whsec_{host}")).expect("a secret"),
        sealed: SealedSecret(format!("sealed:{host}")),
        now_ms,
    }
}

async fn create(
    repo: &dyn WebhookRepository,
    host: &str,
    event_types: &str,
    enabled: bool,
    now_ms: i64,
) -> WebhookEndpoint {
    done(
        repo.create(new_endpoint(host, event_types, enabled, now_ms), None)
            .await
            .expect("created"),
    )
    .endpoint
}

fn event_id(n: i64) -> EventId {
    EventId::parse(&format!("evt_{n:032x}")).expect("an event id")
}

fn event(n: i64, kind: EventType, occurred_at_ms: i64) -> FannedEvent {
    FannedEvent {
        position: FeedPosition::new(0, n),
        event_id: event_id(n),
        event_type: kind,
        occurred_at_ms,
        body: format!("{{\"event\":{n}}}").into_bytes(),
    }
}

fn at(n: i64) -> FeedPosition {
    FeedPosition::new(0, n)
}

async fn deliveries_of(repo: &dyn WebhookRepository, endpoint: EndpointId) -> Vec<Delivery> {
    repo.deliveries(DeliveryQuery {
        endpoint,
        status: None,
        before: None,
        max: 1_000,
    })
    .await
    .expect("listed")
}

async fn delivery(repo: &dyn WebhookRepository, endpoint: EndpointId, id: DeliveryId) -> Delivery {
    repo.find_delivery(endpoint, id)
        .await
        .expect("storage answers")
        .expect("the delivery")
}

async fn ping(repo: &dyn WebhookRepository, endpoint: EndpointId, n: i64, now_ms: i64) -> Delivery {
    repo.add_delivery(NewDelivery {
        endpoint,
        event_id: event_id(n),
        event_type: "webhook.ping".to_owned(),
        body: b"{}".to_vec(),
        now_ms,
    })
    .await
    .expect("added")
}

async fn claim(queue: &dyn DeliveryQueue, now_ms: i64, max: usize) -> Vec<ClaimedDelivery> {
    queue
        .claim("instance-a", now_ms, LEASE_MS, max)
        .await
        .expect("claimed")
}

fn attempt(claimed: &ClaimedDelivery, at_ms: i64, error: Option<AttemptError>) -> Attempt {
    Attempt {
        number: claimed.attempts_made + 1,
        at_ms,
        status_code: Some(if error.is_some() { 500 } else { 204 }),
        latency_ms: 12,
        error,
    }
}

fn settlement(
    claimed: &ClaimedDelivery,
    at_ms: i64,
    error: Option<AttemptError>,
    next: NextStep,
    health: EndpointHealth,
) -> Settlement {
    Settlement {
        delivery: claimed.id,
        endpoint: claimed.endpoint,
        lease_token: claimed.lease_token,
        attempt: attempt(claimed, at_ms, error),
        next,
        health,
    }
}

fn ids(deliveries: &[Delivery]) -> Vec<DeliveryId> {
    deliveries.iter().map(|delivery| delivery.id).collect()
}

async fn endpoints_are_created_found_listed_changed_and_deleted(fixture: Fixture) {
    let repo = fixture.webhooks_arc();
    let first = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let second = create(repo.as_ref(), "b.example.com", "order.placed", false, T + 1).await;
    let third = create(repo.as_ref(), "c.example.com", "category.*", true, T + 2).await;
    assert!(first.id < second.id && second.id < third.id);
    assert_eq!(first.url, url("a.example.com"));
    assert_eq!(first.event_types, types("pet.*"));
    assert_eq!(first.disabled, None);
    assert_eq!(second.disabled, Some(DisabledReason::Manual));
    assert_eq!((first.created_at_ms, first.updated_at_ms), (T, T));

    assert_eq!(
        repo.find(second.id).await.expect("found"),
        Some(second.clone())
    );
    let all = repo.list(None, 10).await.expect("listed");
    assert_eq!(all, [first.clone(), second.clone(), third.clone()]);
    assert_eq!(repo.list(None, 2).await.expect("listed").len(), 2);
    assert_eq!(
        repo.list(Some(first.id), 10).await.expect("listed"),
        [second.clone(), third.clone()]
    );

    let unchanged = done(
        repo.update(
            first.id,
            EndpointChange {
                url: Some(first.url.clone()),
                event_types: Some(first.event_types),
                enabled: Some(true),
            },
            T + 10,
            None,
        )
        .await
        .expect("updated"),
    );
    assert_eq!(
        unchanged, first,
        "a change to the same values changes nothing"
    );
    let changed = done(
        repo.update(
            first.id,
            EndpointChange {
                url: Some(url("d.example.com")),
                event_types: Some(types("order.*")),
                enabled: None,
            },
            T + 20,
            None,
        )
        .await
        .expect("updated"),
    );
    assert_eq!(changed.url, url("d.example.com"));
    assert_eq!(changed.event_types, types("order.*"));
    assert_eq!((changed.created_at_ms, changed.updated_at_ms), (T, T + 20));
    assert_eq!(repo.find(first.id).await.expect("found"), Some(changed));

    repo.delete(second.id).await.expect("deleted");
    assert_eq!(repo.find(second.id).await.expect("answered"), None);
    assert!(matches!(
        repo.delete(second.id).await,
        Err(WebhookError::NotFound(id)) if id == second.id
    ));
    assert!(matches!(
        repo.update(second.id, EndpointChange::default(), T, None)
            .await,
        Err(WebhookError::NotFound(_))
    ));
    let fourth = create(repo.as_ref(), "e.example.com", "pet.*", true, T + 30).await;
    assert!(fourth.id > third.id, "an id is never handed out again");
}

async fn at_most_the_limit_of_endpoints_is_kept_also_when_created_at_once(fixture: Fixture) {
    let repo = fixture.webhooks_arc();
    let created = join_all((0..MAX_WEBHOOK_ENDPOINTS + 10).map(|n| {
        let repo = Arc::clone(&repo);
        async move {
            repo.create(
                new_endpoint(&format!("h{n}.example.com"), "pet.*", true, T),
                None,
            )
            .await
        }
    }))
    .await;
    let stored = created.iter().filter(|outcome| outcome.is_ok()).count();
    let refused = created
        .iter()
        .filter(|outcome| matches!(outcome, Err(WebhookError::TooManyEndpoints)))
        .count();
    assert_eq!((stored, refused), (MAX_WEBHOOK_ENDPOINTS, 10));
    let all = repo.list(None, 1_000).await.expect("listed");
    assert_eq!(all.len(), MAX_WEBHOOK_ENDPOINTS);

    repo.delete(all[7].id).await.expect("deleted");
    create(repo.as_ref(), "again.example.com", "pet.*", true, T).await;
    assert!(matches!(
        repo.create(new_endpoint("over.example.com", "pet.*", true, T), None)
            .await,
        Err(WebhookError::TooManyEndpoints)
    ));
}

async fn fan_out_delivers_each_event_to_the_enabled_endpoints_that_take_it(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let every = create(repo.as_ref(), "every.example.com", "pet.*,order.*", true, T).await;
    let pets = create(repo.as_ref(), "pets.example.com", "pet.created", true, T).await;
    let off = create(repo.as_ref(), "off.example.com", "pet.*", false, T).await;
    let later = create(repo.as_ref(), "later.example.com", "pet.*", true, T + 50).await;
    assert_eq!(queue.fanned_out_to().await.expect("read"), None);

    let events = vec![
        event(1, EventType::PetCreated, T + 10),
        event(2, EventType::OrderPlaced, T + 20),
        event(3, EventType::PetCreated, T + 50),
    ];
    assert!(queue
        .fan_out(None, at(3), events, T + 60)
        .await
        .expect("fanned out"));
    assert_eq!(queue.fanned_out_to().await.expect("read"), Some(at(3)));

    let event_ids = |deliveries: Vec<Delivery>| {
        let mut ids: Vec<EventId> = deliveries.into_iter().map(|d| d.event_id).collect();
        ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        ids
    };
    assert_eq!(
        event_ids(deliveries_of(repo.as_ref(), every.id).await),
        [event_id(1), event_id(2), event_id(3)]
    );
    assert_eq!(
        event_ids(deliveries_of(repo.as_ref(), pets.id).await),
        [event_id(1), event_id(3)]
    );
    assert!(deliveries_of(repo.as_ref(), off.id).await.is_empty());
    assert_eq!(
        event_ids(deliveries_of(repo.as_ref(), later.id).await),
        [event_id(3)],
        "an endpoint gets the events from its creation on"
    );
    let added = &deliveries_of(repo.as_ref(), pets.id).await[0];
    assert_eq!(added.status, DeliveryStatus::Pending);
    assert_eq!(added.event_type, "pet.created");
    assert_eq!(added.next_attempt_ms, Some(T + 60));
    assert_eq!(added.created_at_ms, T + 60);
    assert!(added.attempts.is_empty());

    let claimed = claim(queue.as_ref(), T + 60, 100).await;
    let body = claimed
        .iter()
        .find(|claimed| claimed.endpoint == pets.id && claimed.event_id == event_id(3))
        .map(|claimed| claimed.body.clone());
    assert_eq!(
        body,
        Some(b"{\"event\":3}".to_vec()),
        "the body is kept as given"
    );
}

async fn fan_out_moves_the_position_only_from_where_it_is(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let first = vec![event(1, EventType::PetCreated, T)];
    assert!(queue
        .fan_out(None, at(1), first.clone(), T)
        .await
        .expect("ok"));
    assert!(
        !queue.fan_out(None, at(1), first, T).await.expect("ok"),
        "the position is no longer unset"
    );
    let second = vec![event(2, EventType::PetUpdated, T)];
    assert!(
        !queue
            .fan_out(Some(at(0)), at(2), second.clone(), T)
            .await
            .expect("ok"),
        "the position is not where the caller read from"
    );
    assert_eq!(queue.fanned_out_to().await.expect("read"), Some(at(1)));
    assert_eq!(deliveries_of(repo.as_ref(), endpoint.id).await.len(), 1);
    assert!(queue
        .fan_out(Some(at(1)), at(2), second, T)
        .await
        .expect("ok"));
    assert_eq!(queue.fanned_out_to().await.expect("read"), Some(at(2)));
    assert_eq!(deliveries_of(repo.as_ref(), endpoint.id).await.len(), 2);
}

async fn racing_fan_outs_add_each_delivery_once(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let a = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let b = create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    for (from, to) in [(None, 20), (Some(at(20)), 40)] {
        let events: Vec<FannedEvent> = (to - 19..=to)
            .map(|n| event(n, EventType::PetCreated, T))
            .collect();
        let outcomes = join_all((0..8).map(|_| {
            let (queue, events) = (Arc::clone(&queue), events.clone());
            async move { queue.fan_out(from, at(to), events, T).await.expect("ok") }
        }))
        .await;
        assert_eq!(outcomes.iter().filter(|moved| **moved).count(), 1);
    }
    for endpoint in [a.id, b.id] {
        let deliveries = deliveries_of(repo.as_ref(), endpoint).await;
        let events: HashSet<EventId> = deliveries.iter().map(|d| d.event_id.clone()).collect();
        assert_eq!((deliveries.len(), events.len()), (40, 40));
    }
}

async fn concurrent_claimers_never_share_a_delivery(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    let events: Vec<FannedEvent> = (1..=60)
        .map(|n| event(n, EventType::PetCreated, T))
        .collect();
    assert!(queue.fan_out(None, at(60), events, T).await.expect("ok"));
    let claims = join_all((0..20).map(|n| {
        let queue = Arc::clone(&queue);
        async move {
            queue
                .claim(&format!("instance-{n}"), T + 1, LEASE_MS, 8)
                .await
                .expect("claimed")
        }
    }))
    .await;
    let claimed: Vec<DeliveryId> = claims.iter().flatten().map(|claimed| claimed.id).collect();
    let distinct: HashSet<DeliveryId> = claimed.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        claimed.len(),
        "a delivery was claimed twice"
    );
    assert_eq!(claimed.len(), 120, "every delivery is claimed by someone");
    assert!(claims.iter().all(|batch| batch.len() <= 8));
    assert!(claim(queue.as_ref(), T + 2, 100).await.is_empty());
}

async fn a_claim_takes_due_deliveries_of_enabled_endpoints_oldest_due_first(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let on = create(repo.as_ref(), "on.example.com", "pet.*", true, T).await;
    let other = create(repo.as_ref(), "other.example.com", "pet.*", true, T).await;
    let late = ping(repo.as_ref(), on.id, 1, T + 30).await;
    let early = ping(repo.as_ref(), on.id, 2, T + 10).await;
    let middle = ping(repo.as_ref(), other.id, 3, T + 20).await;
    assert!(
        claim(queue.as_ref(), T + 5, 10).await.is_empty(),
        "none due yet"
    );

    let first = claim(queue.as_ref(), T + 100, 2).await;
    assert_eq!(
        first.iter().map(|c| c.id).collect::<Vec<_>>(),
        [early.id, middle.id],
        "oldest due first, at most max"
    );
    let lease = &first[0];
    assert_eq!(lease.endpoint, on.id);
    assert_eq!(lease.url, on.url);
    assert_eq!(
        lease.secret,
        SealedSecret("sealed:on.example.com".to_owned())
    );
    assert_eq!(lease.previous_secret, None);
    assert_eq!(lease.event_id, event_id(2));
    assert_eq!(lease.attempts_made, 0);
    assert_eq!(lease.failing_since_ms, None);
    assert_eq!(lease.lease_until_ms, T + 100 + LEASE_MS);

    done(
        repo.update(
            on.id,
            EndpointChange {
                enabled: Some(false),
                ..EndpointChange::default()
            },
            T + 101,
            None,
        )
        .await
        .expect("disabled"),
    );
    assert!(
        claim(queue.as_ref(), T + 102, 10).await.is_empty(),
        "a disabled endpoint's delivery is not claimed: {late:?}"
    );
}

async fn an_expired_lease_is_taken_over_and_the_stale_settlement_records_nothing(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let added = ping(repo.as_ref(), endpoint.id, 1, T).await;
    let first = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    assert!(
        claim(queue.as_ref(), T + LEASE_MS - 1, 10).await.is_empty(),
        "a live lease is not taken"
    );
    let second = claim(queue.as_ref(), T + LEASE_MS, 10)
        .await
        .pop()
        .expect("taken over once the lease ran out");
    assert_eq!(second.id, added.id);
    assert!(second.lease_token > first.lease_token);

    let stale = settlement(
        &first,
        T + 10,
        None,
        NextStep::Succeeded,
        EndpointHealth::Answering,
    );
    assert!(!queue.settle(stale).await.expect("answered"));
    let after_stale = delivery(repo.as_ref(), endpoint.id, added.id).await;
    assert_eq!(after_stale.status, DeliveryStatus::Pending);
    assert!(
        after_stale.attempts.is_empty(),
        "the stale attempt is not recorded"
    );

    let current = settlement(
        &second,
        T + LEASE_MS + 5,
        None,
        NextStep::Succeeded,
        EndpointHealth::Answering,
    );
    assert!(queue.settle(current.clone()).await.expect("answered"));
    let settled = delivery(repo.as_ref(), endpoint.id, added.id).await;
    assert_eq!(settled.status, DeliveryStatus::Succeeded);
    assert_eq!(settled.next_attempt_ms, None);
    assert_eq!(settled.attempts, std::slice::from_ref(&current.attempt));
    assert!(
        !queue.settle(current).await.expect("answered"),
        "a settled lease is over"
    );
}

async fn settling_records_the_attempt_and_the_endpoints_health(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let added = ping(repo.as_ref(), endpoint.id, 1, T).await;

    let first = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    let failed = settlement(
        &first,
        T + 1,
        Some(AttemptError::Status),
        NextStep::RetryAt(T + 5_000),
        EndpointHealth::Failing { since_ms: T + 1 },
    );
    assert!(queue.settle(failed.clone()).await.expect("settled"));
    let pending = delivery(repo.as_ref(), endpoint.id, added.id).await;
    assert_eq!(pending.status, DeliveryStatus::Pending);
    assert_eq!(pending.next_attempt_ms, Some(T + 5_000));
    assert_eq!(pending.attempts, [failed.attempt]);
    assert!(
        claim(queue.as_ref(), T + 4_999, 10).await.is_empty(),
        "not due yet"
    );

    let second = claim(queue.as_ref(), T + 5_000, 10)
        .await
        .pop()
        .expect("due");
    assert_eq!(second.attempts_made, 1);
    assert_eq!(second.failing_since_ms, Some(T + 1));
    let failed_again = settlement(
        &second,
        T + 5_001,
        Some(AttemptError::Timeout),
        NextStep::RetryAt(T + 6_000),
        EndpointHealth::Failing {
            since_ms: T + 5_001,
        },
    );
    assert!(queue.settle(failed_again).await.expect("settled"));
    let third = claim(queue.as_ref(), T + 6_000, 10)
        .await
        .pop()
        .expect("due");
    assert_eq!(
        third.failing_since_ms,
        Some(T + 1),
        "failing since the first failure, not the last"
    );
    assert_eq!(third.attempts_made, 2);

    let answered = settlement(
        &third,
        T + 6_001,
        None,
        NextStep::Succeeded,
        EndpointHealth::Answering,
    );
    assert!(queue.settle(answered).await.expect("settled"));
    let succeeded = delivery(repo.as_ref(), endpoint.id, added.id).await;
    assert_eq!(succeeded.status, DeliveryStatus::Succeeded);
    assert_eq!(
        succeeded
            .attempts
            .iter()
            .map(|a| a.number)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(succeeded.attempts[1].error, Some(AttemptError::Timeout));

    let next = ping(repo.as_ref(), endpoint.id, 2, T + 7_000).await;
    let fourth = claim(queue.as_ref(), T + 7_000, 10)
        .await
        .pop()
        .expect("due");
    assert_eq!(fourth.id, next.id);
    assert_eq!(fourth.failing_since_ms, None, "an answer ends the failing");
    let exhausted = settlement(
        &fourth,
        T + 7_001,
        Some(AttemptError::Connect),
        NextStep::Failed(DeliveryFailure::Exhausted),
        EndpointHealth::Failing {
            since_ms: T + 7_001,
        },
    );
    assert!(queue.settle(exhausted).await.expect("settled"));
    let given_up = delivery(repo.as_ref(), endpoint.id, next.id).await;
    assert_eq!(
        (given_up.status, given_up.failure, given_up.next_attempt_ms),
        (
            DeliveryStatus::Failed,
            Some(DeliveryFailure::Exhausted),
            None
        )
    );
}

async fn a_failing_endpoint_disabled_fails_its_pending_deliveries(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let other = create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    let attempted = ping(repo.as_ref(), endpoint.id, 1, T).await;
    let waiting = ping(repo.as_ref(), endpoint.id, 2, T + 1_000).await;
    let elsewhere = ping(repo.as_ref(), other.id, 3, T + 1_000).await;
    let claimed = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    assert_eq!(claimed.id, attempted.id);
    let disable = settlement(
        &claimed,
        T + 2,
        Some(AttemptError::Connect),
        NextStep::Failed(DeliveryFailure::EndpointDisabled),
        EndpointHealth::Disable,
    );
    assert!(queue.settle(disable).await.expect("settled"));
    let stored = repo.find(endpoint.id).await.expect("found").expect("kept");
    assert_eq!(stored.disabled, Some(DisabledReason::Failing));
    assert_eq!(stored.updated_at_ms, T + 2);
    for id in [attempted.id, waiting.id] {
        let failed = delivery(repo.as_ref(), endpoint.id, id).await;
        assert_eq!(
            (failed.status, failed.failure, failed.next_attempt_ms),
            (
                DeliveryStatus::Failed,
                Some(DeliveryFailure::EndpointDisabled),
                None
            )
        );
    }
    assert_eq!(
        delivery(repo.as_ref(), other.id, elsewhere.id).await.status,
        DeliveryStatus::Pending,
        "another endpoint's deliveries are kept"
    );
    assert!(matches!(
        repo.add_delivery(NewDelivery {
            endpoint: endpoint.id,
            event_id: event_id(9),
            event_type: "webhook.ping".to_owned(),
            body: Vec::new(),
            now_ms: T + 3,
        })
        .await,
        Err(WebhookError::EndpointDisabled(id)) if id == endpoint.id
    ));
}

async fn disabling_by_hand_fails_pending_deliveries_and_enabling_starts_afresh(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let first = ping(repo.as_ref(), endpoint.id, 1, T).await;
    let claimed = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    let failing = settlement(
        &claimed,
        T + 1,
        Some(AttemptError::Status),
        NextStep::RetryAt(T + 10),
        EndpointHealth::Failing { since_ms: T + 1 },
    );
    assert!(queue.settle(failing).await.expect("settled"));
    let off = |enabled| EndpointChange {
        enabled: Some(enabled),
        ..EndpointChange::default()
    };
    let disabled = done(
        repo.update(endpoint.id, off(false), T + 5, None)
            .await
            .expect("ok"),
    );
    assert_eq!(disabled.disabled, Some(DisabledReason::Manual));
    assert_eq!(disabled.updated_at_ms, T + 5);
    let failed = delivery(repo.as_ref(), endpoint.id, first.id).await;
    assert_eq!(
        (failed.status, failed.failure),
        (
            DeliveryStatus::Failed,
            Some(DeliveryFailure::EndpointDisabled)
        )
    );
    assert!(matches!(
        repo.retry_delivery(endpoint.id, first.id, T + 6).await,
        Err(WebhookError::EndpointDisabled(_))
    ));

    let enabled = done(
        repo.update(endpoint.id, off(true), T + 20, None)
            .await
            .expect("ok"),
    );
    assert_eq!(enabled.disabled, None);
    repo.retry_delivery(endpoint.id, first.id, T + 21)
        .await
        .expect("retried");
    let again = claim(queue.as_ref(), T + 21, 10).await.pop().expect("due");
    assert_eq!(again.failing_since_ms, None, "enabling clears the failing");
    assert_eq!(again.attempts_made, 1, "the attempts are kept");
}

async fn a_retry_makes_a_delivery_due_now_unless_it_is_in_flight(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let other = create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    let added = ping(repo.as_ref(), endpoint.id, 1, T).await;
    let claimed = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    assert!(matches!(
        repo.retry_delivery(endpoint.id, added.id, T + 1).await,
        Err(WebhookError::InFlight(id)) if id == added.id
    ));
    let exhausted = settlement(
        &claimed,
        T + 2,
        Some(AttemptError::Status),
        NextStep::Failed(DeliveryFailure::Exhausted),
        EndpointHealth::Failing { since_ms: T + 2 },
    );
    assert!(queue.settle(exhausted).await.expect("settled"));
    assert!(claim(queue.as_ref(), T + 3, 10).await.is_empty());

    let retried = repo
        .retry_delivery(endpoint.id, added.id, T + 100)
        .await
        .expect("retried");
    assert_eq!(
        (retried.status, retried.failure, retried.next_attempt_ms),
        (DeliveryStatus::Pending, None, Some(T + 100))
    );
    assert_eq!(retried.attempts.len(), 1, "its attempts are kept");
    let again = claim(queue.as_ref(), T + 100, 10)
        .await
        .pop()
        .expect("due now");
    assert_eq!((again.id, again.attempts_made), (added.id, 1));

    // Once its lease ran out, a delivery is no longer in flight.
    let retried_after = repo
        .retry_delivery(endpoint.id, added.id, T + 100 + LEASE_MS)
        .await
        .expect("retried");
    assert_eq!(retried_after.next_attempt_ms, Some(T + 100 + LEASE_MS));

    assert!(matches!(
        repo.retry_delivery(other.id, added.id, T).await,
        Err(WebhookError::DeliveryNotFound { .. })
    ));
    let missing = DeliveryId::parse(999_999).expect("an id");
    assert!(matches!(
        repo.retry_delivery(endpoint.id, missing, T).await,
        Err(WebhookError::DeliveryNotFound { .. })
    ));
    let no_endpoint = EndpointId::parse(999_999).expect("an id");
    assert!(matches!(
        repo.retry_delivery(no_endpoint, added.id, T).await,
        Err(WebhookError::NotFound(_))
    ));
}

async fn a_rotated_secret_keeps_signing_until_it_expires(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let rotation = |tag: &str, expires| SecretRotation {
        secret: SigningSecret::new(format!("whsec_{tag}")).expect("a secret"),
        sealed: SealedSecret(format!("sealed:{tag}")),
        previous_expires_ms: expires,
        now_ms: T + 1,
    };
    let rotated = done(
        repo.rotate_secret(endpoint.id, rotation("second", T + 1_000), None)
            .await
            .expect("rotated"),
    );
    assert_eq!(rotated.secret.expose(), "whsec_second");
    assert_eq!(rotated.previous_expires_ms, T + 1_000);
    assert_eq!(rotated.endpoint.updated_at_ms, T + 1);

    ping(repo.as_ref(), endpoint.id, 1, T).await;
    let before = claim(queue.as_ref(), T + 999, 10)
        .await
        .pop()
        .expect("claimed");
    assert_eq!(before.secret, SealedSecret("sealed:second".to_owned()));
    assert_eq!(
        before.previous_secret,
        Some(SealedSecret("sealed:a.example.com".to_owned()))
    );
    let after = claim(queue.as_ref(), T + 999 + LEASE_MS, 10)
        .await
        .pop()
        .expect("taken over");
    assert_eq!(
        after.previous_secret, None,
        "an expired previous secret no longer signs"
    );

    done(
        repo.rotate_secret(endpoint.id, rotation("third", T + 500_000), None)
            .await
            .expect("rotated"),
    );
    let third = claim(queue.as_ref(), T + 999 + 2 * LEASE_MS, 10)
        .await
        .pop()
        .expect("taken over");
    assert_eq!(third.secret, SealedSecret("sealed:third".to_owned()));
    assert_eq!(
        third.previous_secret,
        Some(SealedSecret("sealed:second".to_owned()))
    );
    assert!(matches!(
        repo.rotate_secret(
            EndpointId::parse(999_999).expect("an id"),
            rotation("x", T),
            None
        )
        .await,
        Err(WebhookError::NotFound(_))
    ));
}

async fn deliveries_are_listed_newest_first_by_status_and_page(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let other = create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    let mut added = Vec::new();
    for n in 1..=5 {
        added.push(ping(repo.as_ref(), endpoint.id, n, T).await);
        ping(repo.as_ref(), other.id, n, T).await;
    }
    let succeed = claim(queue.as_ref(), T, 100)
        .await
        .into_iter()
        .find(|claimed| claimed.id == added[1].id)
        .expect("claimed");
    let answered = settlement(
        &succeed,
        T + 1,
        None,
        NextStep::Succeeded,
        EndpointHealth::Answering,
    );
    assert!(queue.settle(answered).await.expect("settled"));

    let query = |status, before, max| DeliveryQuery {
        endpoint: endpoint.id,
        status,
        before,
        max,
    };
    let newest_first: Vec<DeliveryId> = added.iter().rev().map(|d| d.id).collect();
    assert_eq!(
        ids(&deliveries_of(repo.as_ref(), endpoint.id).await),
        newest_first
    );
    let page = repo.deliveries(query(None, None, 2)).await.expect("listed");
    assert_eq!(ids(&page), newest_first[..2]);
    let next = repo
        .deliveries(query(None, Some(page[1].id), 2))
        .await
        .expect("listed");
    assert_eq!(ids(&next), newest_first[2..4]);
    let succeeded = repo
        .deliveries(query(Some(DeliveryStatus::Succeeded), None, 10))
        .await
        .expect("listed");
    assert_eq!(ids(&succeeded), [added[1].id]);
    assert_eq!(succeeded[0].attempts.len(), 1, "listed with its attempts");
    let pending = repo
        .deliveries(query(Some(DeliveryStatus::Pending), None, 10))
        .await
        .expect("listed");
    assert_eq!(pending.len(), 4);

    assert_eq!(
        repo.find_delivery(other.id, added[0].id)
            .await
            .expect("answered"),
        None,
        "a delivery is found under its own endpoint only"
    );
    let missing = EndpointId::parse(999_999).expect("an id");
    assert!(matches!(
        repo.deliveries(DeliveryQuery {
            endpoint: missing,
            status: None,
            before: None,
            max: 10
        })
        .await,
        Err(WebhookError::NotFound(_))
    ));
    assert_eq!(queue.oldest_pending().await.expect("read"), Some(T));
}

async fn deleting_an_endpoint_deletes_its_deliveries(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let gone = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let kept = create(repo.as_ref(), "b.example.com", "pet.*", true, T).await;
    let doomed = ping(repo.as_ref(), gone.id, 1, T).await;
    let survivor = ping(repo.as_ref(), kept.id, 1, T + 1).await;
    let claimed = claim(queue.as_ref(), T, 1).await.pop().expect("claimed");
    assert_eq!(claimed.id, doomed.id);
    let answered = settlement(
        &claimed,
        T + 1,
        None,
        NextStep::Succeeded,
        EndpointHealth::Answering,
    );
    assert!(queue.settle(answered).await.expect("settled"));

    repo.delete(gone.id).await.expect("deleted");
    assert_eq!(
        repo.find_delivery(gone.id, doomed.id)
            .await
            .expect("answered"),
        None
    );
    assert_eq!(
        ids(&deliveries_of(repo.as_ref(), kept.id).await),
        [survivor.id]
    );
    let again = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let fresh = ping(repo.as_ref(), again.id, 1, T).await;
    assert!(
        fresh.id > survivor.id,
        "a delivery id is never handed out again"
    );
}

async fn the_purge_deletes_only_old_finished_deliveries_and_is_bounded(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let mut added = Vec::new();
    for n in 1..=6 {
        added.push(ping(repo.as_ref(), endpoint.id, n, T + n).await);
    }
    // The first four finish (two succeed, two fail); the last two stay pending.
    let claimed = claim(queue.as_ref(), T + 10, 4).await;
    assert_eq!(claimed.len(), 4);
    for (n, claimed) in claimed.iter().enumerate() {
        let next = if n % 2 == 0 {
            NextStep::Succeeded
        } else {
            NextStep::Failed(DeliveryFailure::Exhausted)
        };
        let settled = settlement(claimed, T + 11, None, next, EndpointHealth::Answering);
        assert!(queue.settle(settled).await.expect("settled"));
    }
    assert_eq!(queue.oldest_pending().await.expect("read"), Some(T + 5));

    assert_eq!(
        queue.purge_finished(T + 1, 10).await.expect("purged"),
        0,
        "none older"
    );
    assert_eq!(
        queue.purge_finished(T + 100, 3).await.expect("purged"),
        3,
        "bounded"
    );
    assert_eq!(queue.purge_finished(T + 100, 10).await.expect("purged"), 1);
    assert_eq!(queue.purge_finished(T + 100, 10).await.expect("purged"), 0);
    let left = deliveries_of(repo.as_ref(), endpoint.id).await;
    assert_eq!(
        ids(&left),
        [added[5].id, added[4].id],
        "pending ones are kept"
    );
}

async fn the_feed_head_is_the_newest_readable_event(fixture: Fixture) {
    let events = fixture.events();
    assert_eq!(
        events.head().await.expect("read"),
        None,
        "a fresh feed has none"
    );
    for n in 0..3 {
        fixture
            .repo()
            .create(new_pet(&format!("Pet {n}"), 1, None), None)
            .await
            .expect("created");
    }
    let newest = readable_events(&fixture).await;
    let last = newest.last().expect("three events").position;
    assert_eq!(events.head().await.expect("read"), Some(last));

    let purged = events.purge(i64::MAX, 100).await.expect("purged");
    assert_eq!(purged, 3);
    assert_eq!(
        events.head().await.expect("read"),
        Some(last),
        "with every event purged, the last purged one's position"
    );
}

/// Every event of the feed, once every committed one is readable.
async fn readable_events(fixture: &Fixture) -> Vec<FeedEntry> {
    eventually(
        Duration::from_secs(10),
        "every committed event readable",
        async || match fixture.events().held_back_since().await {
            Ok(None) => Ok(()),
            other => Err(other),
        },
    )
    .await;
    fixture
        .events()
        .read(FeedQuery {
            after: None,
            types: EventTypes::EVERY,
            visible: VisibleOrders::All,
            max: 100,
        })
        .await
        .expect("the feed reads")
        .entries
}

async fn an_attempt_settled_after_its_endpoint_was_disabled_leaves_the_delivery_failed(
    fixture: Fixture,
) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    let endpoint = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    let added = ping(repo.as_ref(), endpoint.id, 1, T).await;
    let claimed = claim(queue.as_ref(), T, 10).await.pop().expect("claimed");
    let off = EndpointChange {
        enabled: Some(false),
        ..EndpointChange::default()
    };
    done(
        repo.update(endpoint.id, off, T + 1, None)
            .await
            .expect("disabled"),
    );
    let failing = settlement(
        &claimed,
        T + 2,
        Some(AttemptError::Status),
        NextStep::RetryAt(T + 10),
        EndpointHealth::Failing { since_ms: T + 2 },
    );
    assert!(queue.settle(failing.clone()).await.expect("settled"));
    let settled = delivery(repo.as_ref(), endpoint.id, added.id).await;
    assert_eq!(
        (settled.status, settled.failure, settled.next_attempt_ms),
        (
            DeliveryStatus::Failed,
            Some(DeliveryFailure::EndpointDisabled),
            None
        ),
        "not scheduled again for a disabled endpoint"
    );
    assert_eq!(settled.attempts, std::slice::from_ref(&failing.attempt));
}

fn plan(key: &str) -> RecordPlan<CreatedEndpoint> {
    RecordPlan {
        owner: petstore_domain::KeyId::parse(&"6".repeat(32)).expect("a key id"),
        key: petstore_domain::IdempotencyKey::parse(key).expect("a key"),
        fingerprint: Fingerprint([5; 32]),
        stored_at: 1_900_000_000,
        expired_before: 1_900_000_000 - 86_400,
        render: |created: &CreatedEndpoint| StoredResponse {
            status: 201,
            headers: Vec::new(),
            body: format!("{{\"id\":{}}}", created.endpoint.id).into_bytes(),
        },
    }
}

async fn a_keyed_create_is_answered_from_its_record_also_in_place_of_too_many(fixture: Fixture) {
    let repo = fixture.webhooks_arc();
    let Written::Done(first, Some(response)) = repo
        .create(
            new_endpoint("a.example.com", "pet.*", true, T),
            Some(plan("create-a")),
        )
        .await
        .expect("storage answers")
    else {
        panic!("the first keyed create is carried out and recorded");
    };
    assert_eq!(
        response.body,
        format!("{{\"id\":{}}}", first.endpoint.id).into_bytes()
    );
    for n in 1..MAX_WEBHOOK_ENDPOINTS {
        create(
            repo.as_ref(),
            &format!("h{n}.example.com"),
            "pet.*",
            true,
            T,
        )
        .await;
    }
    let again = repo
        .create(
            new_endpoint("a.example.com", "pet.*", true, T),
            Some(plan("create-a")),
        )
        .await
        .expect("answered from the record, not refused as too many");
    let Written::Earlier(record) = again else {
        panic!("the retry is answered from the record");
    };
    assert_eq!(record.response, response);
    assert_eq!(
        repo.list(None, 1_000).await.expect("listed").len(),
        MAX_WEBHOOK_ENDPOINTS
    );
}

/// What the fan-out reads: the union of the enabled endpoints' types, none without one.
async fn the_subscribed_types_are_those_of_the_enabled_endpoints(fixture: Fixture) {
    let (repo, queue) = (fixture.webhooks_arc(), fixture.deliveries_arc());
    assert_eq!(queue.subscribed_types().await.expect("read"), None);
    let pets = create(repo.as_ref(), "a.example.com", "pet.*", true, T).await;
    create(repo.as_ref(), "b.example.com", "category.*", false, T).await;
    create(repo.as_ref(), "c.example.com", "order.placed", true, T).await;
    assert_eq!(
        queue.subscribed_types().await.expect("read"),
        Some(types("pet.*,order.placed"))
    );
    let disable = EndpointChange {
        enabled: Some(false),
        ..EndpointChange::default()
    };
    repo.update(pets.id, disable, T + 1, None)
        .await
        .expect("disabled");
    assert_eq!(
        queue.subscribed_types().await.expect("read"),
        Some(types("order.placed"))
    );
}
