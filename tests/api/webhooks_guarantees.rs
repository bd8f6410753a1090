//! Webhook delivery's guarantees against the real binary: two instances on one PostgreSQL
//! database deliver each event once between them (a delivery is leased to one instance at a
//! time), and a server killed (`kill -9`) with attempts in flight delivers every event after
//! its restart (at least once: an attempt the kill cut short is made again once its lease ran
//! out).

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{json, Value};

use petstore_test_support::webhook_receiver::{Reply, WebhookReceiver};
use petstore_test_support::{backend_named, eventually, send, TestApp};

use crate::instances::two_instances_with;

/// How long all deliveries may take to arrive.
const DELIVERED_WITHIN: Duration = Duration::from_secs(60);

/// The settings that let a server deliver to `receiver` on loopback.
fn receiver_settings(receiver: &WebhookReceiver) -> Vec<(&'static str, String)> {
    vec![
        ("PETSTORE_WEBHOOK_ALLOW_LOOPBACK", "true".to_owned()),
        (
            "PETSTORE_WEBHOOK_CA_FILE",
            receiver
                .ca_pem_path()
                .to_str()
                .expect("a UTF-8 path")
                .to_owned(),
        ),
    ]
}

/// Registers an endpoint for `pet.created` at `receiver`.
async fn register(app: &TestApp, staff: &str, receiver: &WebhookReceiver) {
    let body = json!({"url": receiver.url("/in"), "eventTypes": ["pet.created"]});
    let created = send(
        app.post_json_as(staff, "/v1/webhook-endpoints"),
        Some(body.to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// The ids of the `pet.created` events in the feed, read through `app`.
async fn created_event_ids(app: &TestApp, staff: &str, expected: usize) -> Vec<String> {
    eventually(DELIVERED_WITHIN, "every event readable", async || {
        let mut ids = Vec::new();
        let mut path = "/v1/events?types=pet.created&limit=100".to_owned();
        loop {
            let page = send(app.get_as(staff, &path), None).await;
            let events: Vec<Value> = serde_json::from_value(page.json()).expect("an array");
            if events.is_empty() {
                break;
            }
            ids.extend(
                events
                    .iter()
                    .map(|event| event["id"].as_str().expect("an id").to_owned()),
            );
            let link = page.header("link").expect("a next link");
            path = link[link.find('<').expect("<") + 1..link.find('>').expect(">")].to_owned();
        }
        if ids.len() == expected {
            Ok(ids)
        } else {
            Err(format!("{} of {expected} events readable", ids.len()))
        }
    })
    .await
}

/// How many requests the receiver got per `webhook-id`.
fn received_per_id(receiver: &WebhookReceiver) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for request in receiver.requests() {
        let id = request.header("webhook-id").expect("webhook-id").to_owned();
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

/// 200 pets created through two instances at once: every `pet.created` is posted exactly once,
/// whichever instance fanned it out and whichever delivered it.
#[actix_web::test]
async fn two_instances_deliver_each_event_exactly_once() {
    const PETS: usize = 200;
    let receiver = WebhookReceiver::start();
    let settings = receiver_settings(&receiver);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let (app, other) = two_instances_with(&settings).await;
    let staff = app.staff_key().await;
    register(&app, &staff, &receiver).await;

    let creates = (0..PETS).map(|n| {
        let address = if n % 2 == 0 {
            &app.address
        } else {
            &other.address
        };
        let request = app
            .client
            .post(format!("{address}/v1/pets"))
            .bearer_auth(&app.api_key)
            .insert_header(("Content-Type", "application/json"));
        send(
            request,
            Some(json!({"name": format!("Pet {n}"), "categoryId": 1}).to_string()),
        )
    });
    for created in join_all(creates).await {
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let ids = created_event_ids(&app, &staff, PETS).await;
    receiver.wait_for_requests(PETS, DELIVERED_WITHIN).await;
    // Every delivery settled: nothing is pending that could still be posted again.
    let pending = "/v1/webhook-endpoints/1/deliveries?status=pending&limit=1";
    eventually(DELIVERED_WITHIN, "no pending delivery", async || {
        let page = send(app.get_as(&staff, pending), None).await;
        match page.json().as_array().map(Vec::len) {
            Some(0) => Ok(()),
            _ => Err(page.body),
        }
    })
    .await;
    let received = received_per_id(&receiver);
    let repeated: Vec<_> = received.iter().filter(|(_, count)| **count > 1).collect();
    assert!(repeated.is_empty(), "posted more than once: {repeated:?}");
    for id in &ids {
        assert_eq!(received.get(id), Some(&1), "{id} was not posted");
    }
    assert_eq!(received.len(), PETS);
}

petstore_test_support::database::on_backends!(
    #[actix_web::test] super::spawn_slowly_answered,
    [sqlite, postgres]
    every_event_is_delivered_after_kill_9_with_attempts_in_flight,
);

/// A receiver slow to answer, and a server in a process of its own delivering to it with a
/// short deadline and lease, so that a restart takes over the attempts a kill cut short.
async fn spawn_slowly_answered(backend: &str) -> (TestApp, WebhookReceiver) {
    let receiver = WebhookReceiver::builder()
        .default_reply(Reply::status(204).after(Duration::from_millis(300)))
        .start();
    let mut builder = TestApp::builder(backend_named(backend))
        .in_a_process()
        .setting("PETSTORE_WEBHOOK_TIMEOUT", "2s")
        .setting("PETSTORE_WEBHOOK_LEASE", "7s")
        .setting("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s,1s,1s,1s");
    for (name, value) in receiver_settings(&receiver) {
        builder = builder.setting(name, &value);
    }
    (builder.spawn().await, receiver)
}

/// 30 pets, the server killed once the first posts arrived and restarted: every `pet.created`
/// is posted at least once in the end. Repeats are allowed (an attempt cut short is made
/// again); their count is printed.
async fn every_event_is_delivered_after_kill_9_with_attempts_in_flight(
    (mut app, receiver): (TestApp, WebhookReceiver),
) {
    const PETS: usize = 30;
    let staff = app.staff_key().await;
    register(&app, &staff, &receiver).await;
    for n in 0..PETS {
        let created = send(
            app.post_json("/v1/pets"),
            Some(json!({"name": format!("Pet {n}"), "categoryId": 1}).to_string()),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    receiver.wait_for_requests(1, DELIVERED_WITHIN).await;
    app.kill_9();
    app.restart();
    let ids = created_event_ids(&app, &staff, PETS).await;
    let received = eventually(DELIVERED_WITHIN, "every event posted", async || {
        let received = received_per_id(&receiver);
        let missing = ids.iter().filter(|id| !received.contains_key(*id)).count();
        if missing == 0 {
            Ok(received)
        } else {
            Err(format!("{missing} of {PETS} not posted yet"))
        }
    })
    .await;
    let repeats: usize = received.values().map(|count| count - 1).sum();
    println!("kill -9: {PETS} events posted, {repeats} posted again after the restart");
}
