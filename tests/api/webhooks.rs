//! Webhooks end to end: a `store` key registers an HTTPS endpoint (a receiver on loopback whose
//! CA the server is told to trust), the store's changes are posted to it signed per Standard
//! Webhooks 1.0, failures are retried with the same `webhook-id` and a fresh signature, and
//! every attempt shows in the endpoint's deliveries. Refusals that come before storage run on
//! `memory:`; the address rule is checked against a name the server resolves to loopback.
//!
//! Deliveries are asynchronous: tests wait for the receiver's requests, and poll the delivery
//! list, with a deadline.

use std::time::Duration;

use awc::http::Method;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use petstore_test_support::webhook_receiver::{Reply, WebhookReceiver};
use petstore_test_support::{backend_named, eventually, send, TestApp, TestResponse};

/// How long a delivery may take to arrive: the worker looks every 200 ms, and on PostgreSQL an
/// event is fanned out once every older transaction ended.
const DELIVERED_WITHIN: Duration = Duration::from_secs(15);

/// A server that trusts `receiver`'s CA and may deliver to loopback, with `settings` besides.
async fn spawn_for(
    backend: &str,
    receiver: &WebhookReceiver,
    settings: &[(&str, &str)],
) -> TestApp {
    let mut builder = TestApp::builder(backend_named(backend))
        .setting("PETSTORE_WEBHOOK_ALLOW_LOOPBACK", "true")
        .setting(
            "PETSTORE_WEBHOOK_CA_FILE",
            receiver.ca_pem_path().to_str().expect("a UTF-8 path"),
        );
    for (name, value) in settings {
        builder = builder.setting(name, value);
    }
    builder.spawn().await
}

pub(crate) async fn call(
    app: &TestApp,
    method: Method,
    key: &str,
    path: &str,
    body: Option<Value>,
) -> TestResponse {
    let request = app.client.request(method, app.url(path)).bearer_auth(key);
    match body {
        Some(body) => {
            let request = request.insert_header(("Content-Type", "application/json"));
            send(request, Some(body.to_string())).await
        }
        None => send(request, None).await,
    }
}

/// Registers an endpoint; its JSON with the secret.
async fn register(app: &TestApp, staff: &str, body: Value) -> Value {
    let created = call(
        app,
        Method::POST,
        staff,
        "/v1/webhook-endpoints",
        Some(body),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.json()
}

/// Whether `signature` (`v1,<base64> ...`) has an entry that `secret` signed for `id`,
/// `timestamp` and `body`, per Standard Webhooks 1.0.
fn signed_with(secret: &str, id: &str, timestamp: &str, body: &[u8], signature: &str) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
        .expect("base64");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("any key length");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    signature
        .split(' ')
        .any(|entry| entry.strip_prefix("v1,") == Some(expected.as_str()))
}

/// The endpoint's deliveries once `done` holds for them; panics at the deadline.
async fn deliveries_when(
    app: &TestApp,
    staff: &str,
    endpoint: i64,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let path = format!("/v1/webhook-endpoints/{endpoint}/deliveries");
    eventually(DELIVERED_WITHIN, what, async || {
        let listed = call(app, Method::GET, staff, &path, None).await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        let deliveries: Vec<Value> = serde_json::from_value(listed.json()).expect("an array");
        if done(&deliveries) {
            Ok(deliveries)
        } else {
            Err(listed.body)
        }
    })
    .await
}

/// The backend's name: each scenario starts its own server, with its receiver's settings.
async fn named(backend: &'static str) -> &'static str {
    backend
}

petstore_test_support::database::on_backends!(
    #[actix_web::test] super::named,
    [memory, sqlite, postgres]
    a_subscribed_change_is_posted_signed_as_the_feed_has_it,
    a_failed_attempt_is_retried_with_the_same_id_and_a_fresh_signature,
    a_rotated_secret_signs_beside_the_previous_one,
);

/// Behaviour that is the same on every backend, on `memory:`.
mod on_memory {
    use super::*;

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::super::named,
        [memory]
        endpoints_are_the_staffs_and_bad_urls_are_refused,
        a_redirect_fails_the_attempt_and_is_never_followed,
        an_endpoint_failing_too_long_is_disabled_and_can_be_enabled_again,
        a_slow_endpoint_times_out_and_a_long_answer_is_not_read,
        a_name_resolving_to_an_internal_address_is_never_connected_to,
        finished_deliveries_are_kept_as_long_as_events,
    );
}

/// The change's event arrives once, with the Standard Webhooks headers, signed with the secret
/// the create answered, its body the feed's item for it byte for byte in JSON; an unsubscribed
/// change is not posted.
async fn a_subscribed_change_is_posted_signed_as_the_feed_has_it(backend: &str) {
    let receiver = WebhookReceiver::start();
    let app = spawn_for(backend, &receiver, &[]).await;
    let staff = app.staff_key().await;
    let endpoint = register(
        &app,
        &staff,
        json!({"url": receiver.url("/hooks?shop=1"), "eventTypes": ["pet.created"]}),
    )
    .await;
    let secret = endpoint["secret"].as_str().expect("the secret, once");
    assert_eq!(endpoint["eventTypes"], json!(["pet.created"]));
    assert_eq!(endpoint["enabled"], true);

    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let renamed = call(
        &app,
        Method::PATCH,
        &staff,
        &format!("/v1/pets/{}", pet["id"]),
        Some(json!({"name": "Max"})),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    let requests = receiver.wait_for_requests(1, DELIVERED_WITHIN).await;
    let request = &requests[0];
    assert_eq!(request.target, "/hooks?shop=1");
    assert_eq!(request.header("content-type"), Some("application/json"));
    let id = request.header("webhook-id").expect("webhook-id");
    let timestamp = request
        .header("webhook-timestamp")
        .expect("webhook-timestamp");
    let signature = request
        .header("webhook-signature")
        .expect("webhook-signature");
    assert!(
        signed_with(secret, id, timestamp, &request.body, signature),
        "{signature}"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let sent_at: u64 = timestamp.parse().expect("seconds");
    assert!(now.abs_diff(sent_at) < 60, "{sent_at} is not now ({now})");

    let posted: Value = serde_json::from_slice(&request.body).expect("JSON");
    let feed = call(
        &app,
        Method::GET,
        &staff,
        "/v1/events?types=pet.created",
        None,
    )
    .await;
    let feed: Vec<Value> = serde_json::from_value(feed.json()).expect("an array");
    assert_eq!(feed.len(), 1);
    assert_eq!(posted, feed[0]);
    assert_eq!(posted["id"], id);
    assert_eq!(posted["data"]["name"], "Rex");

    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "a success",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "succeeded")
        },
    )
    .await;
    assert_eq!(deliveries.len(), 1, "the rename was not subscribed to");
    assert_eq!(deliveries[0]["eventId"], id);
    assert_eq!(deliveries[0]["eventType"], "pet.created");
    assert_eq!(deliveries[0]["attempts"][0]["statusCode"], 204);
    assert_eq!(deliveries[0]["attempts"][0]["error"], Value::Null);
    assert_eq!(receiver.requests().len(), 1, "each event is posted once");
}

/// A 503 then a 204: two attempts of one delivery, the same `webhook-id` and body, each signed
/// for its own timestamp; both attempts listed with their status codes.
async fn a_failed_attempt_is_retried_with_the_same_id_and_a_fresh_signature(backend: &str) {
    let receiver = WebhookReceiver::builder()
        .replies([Reply::status(503)])
        .start();
    let app = spawn_for(
        backend,
        &receiver,
        &[("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s,1s,1s")],
    )
    .await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    let secret = endpoint["secret"].as_str().expect("a string").to_owned();
    let category = call(
        &app,
        Method::POST,
        &staff,
        "/v1/categories",
        Some(json!({"name": "Dogs"})),
    )
    .await;
    assert_eq!(category.status, 201, "{}", category.body);

    let requests = receiver.wait_for_requests(2, DELIVERED_WITHIN).await;
    assert_eq!(
        requests[0].header("webhook-id"),
        requests[1].header("webhook-id")
    );
    assert_eq!(requests[0].body, requests[1].body);
    for request in &requests {
        assert!(signed_with(
            &secret,
            request.header("webhook-id").expect("the header"),
            request.header("webhook-timestamp").expect("the header"),
            &request.body,
            request.header("webhook-signature").expect("the header"),
        ));
    }
    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "a success after a retry",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "succeeded")
        },
    )
    .await;
    let attempts = deliveries[0]["attempts"].as_array().expect("an array");
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert_eq!(attempts[0]["statusCode"], 503);
    assert_eq!(attempts[0]["error"], "status");
    assert_eq!(attempts[1]["number"], 2);
    assert_eq!(attempts[1]["statusCode"], 204);
}

/// After a rotation a delivery carries two signatures, the new secret's and the previous
/// one's; the rotation's secret is answered once, a replay of it is without.
async fn a_rotated_secret_signs_beside_the_previous_one(backend: &str) {
    let receiver = WebhookReceiver::start();
    let app = spawn_for(backend, &receiver, &[]).await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    let old = endpoint["secret"].as_str().expect("a string").to_owned();
    let rotate = format!("/v1/webhook-endpoints/{}/rotate-secret", endpoint["id"]);
    let keyed = |key: &'static str| {
        app.client
            .request(Method::POST, app.url(&rotate))
            .bearer_auth(&staff)
            .insert_header(("Idempotency-Key", key))
    };
    let rotated = send(keyed("rotate-1"), None).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let rotated = rotated.json();
    let new = rotated["secret"]
        .as_str()
        .expect("the new secret, once")
        .to_owned();
    assert_ne!(new, old);
    assert!(rotated["previousSecretExpiresAt"].is_string());
    let replayed = send(keyed("rotate-1"), None).await;
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        replayed.json()["secret"],
        Value::Null,
        "a replay never carries a secret"
    );

    let ping = call(
        &app,
        Method::POST,
        &staff,
        &format!("/v1/webhook-endpoints/{}/ping", endpoint["id"]),
        None,
    )
    .await;
    assert_eq!(ping.status, 202, "{}", ping.body);
    let requests = receiver.wait_for_requests(1, DELIVERED_WITHIN).await;
    let request = &requests[0];
    let signature = request.header("webhook-signature").expect("the header");
    assert_eq!(signature.split(' ').count(), 2, "{signature}");
    let (id, timestamp) = (
        request.header("webhook-id").expect("the header"),
        request.header("webhook-timestamp").expect("the header"),
    );
    assert!(signed_with(&new, id, timestamp, &request.body, signature));
    assert!(signed_with(&old, id, timestamp, &request.body, signature));
    let body: Value = serde_json::from_slice(&request.body).expect("JSON");
    assert_eq!(body["type"], "webhook.ping");
    assert_eq!(body["data"]["endpointId"], endpoint["id"]);
    assert_eq!(ping.json()["eventId"], id);
}

/// CRUD by a `store` key only; the secret never again after the create; URL rules checked at
/// registration; 404 for what does not exist.
async fn endpoints_are_the_staffs_and_bad_urls_are_refused(backend: &str) {
    let app = TestApp::spawn(backend_named(backend)).await;
    let staff = app.staff_key().await;
    let writer = app.api_key.clone();
    call(&app, Method::GET, &writer, "/v1/webhook-endpoints", None)
        .await
        .assert_error(403, "forbidden");
    for url in [
        "http://example.com/hooks",
        "https://localhost/hooks",
        "https://127.0.0.1/hooks",
        "https://[::ffff:127.0.0.1]/hooks",
        "https://169.254.169.254/latest",
        "https://10.1.2.3/",
        "https://user:pw@example.com/",
    ] {
        call(
            &app,
            Method::POST,
            &staff,
            "/v1/webhook-endpoints",
            Some(json!({"url": url})),
        )
        .await
        .assert_error(400, "validation_failed");
    }
    let created = register(
        &app,
        &staff,
        json!({"url": "https://hooks.example.com/a", "enabled": false}),
    )
    .await;
    let path = format!("/v1/webhook-endpoints/{}", created["id"]);
    let got = call(&app, Method::GET, &staff, &path, None).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["secret"], Value::Null);
    assert_eq!(got.json()["disabledReason"], "manual");
    let patched = call(
        &app,
        Method::PATCH,
        &staff,
        &path,
        Some(json!({"enabled": true, "eventTypes": ["order.*"]})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.json()["enabled"], true);
    assert_eq!(patched.json()["disabledReason"], Value::Null);
    assert_eq!(
        patched.json()["eventTypes"],
        json!([
            "order.placed",
            "order.approved",
            "order.delivered",
            "order.cancelled"
        ])
    );
    let listed = call(&app, Method::GET, &staff, "/v1/webhook-endpoints", None).await;
    assert_eq!(listed.json().as_array().map(Vec::len), Some(1));
    let deleted = call(&app, Method::DELETE, &staff, &path, None).await;
    assert_eq!(deleted.status, 204);
    call(&app, Method::GET, &staff, &path, None)
        .await
        .assert_error(404, "not_found");
    call(&app, Method::POST, &staff, &format!("{path}/ping"), None)
        .await
        .assert_error(404, "not_found");
    call(&app, Method::GET, &staff, "/v1/webhook-endpoints/0", None)
        .await
        .assert_error(400, "invalid_parameter");
}

/// A 302 is a failed attempt: its target never hears of it.
async fn a_redirect_fails_the_attempt_and_is_never_followed(backend: &str) {
    let elsewhere = WebhookReceiver::start();
    let receiver = WebhookReceiver::builder()
        .default_reply(Reply::redirect(302, &elsewhere.url("/stolen")))
        .start();
    let app = spawn_for(
        backend,
        &receiver,
        &[("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s")],
    )
    .await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    call(
        &app,
        Method::POST,
        &staff,
        &format!("/v1/webhook-endpoints/{}/ping", endpoint["id"]),
        None,
    )
    .await;
    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "a failure",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "failed")
        },
    )
    .await;
    assert_eq!(deliveries[0]["failure"], "exhausted");
    assert_eq!(deliveries[0]["attempts"][0]["statusCode"], 302);
    assert_eq!(deliveries[0]["attempts"][0]["error"], "redirect");
    assert!(elsewhere.requests().is_empty(), "the redirect was followed");
}

/// Every attempt failing for longer than the setting disables the endpoint and fails its
/// pending deliveries; enabling it makes it receive again.
async fn an_endpoint_failing_too_long_is_disabled_and_can_be_enabled_again(backend: &str) {
    let receiver = WebhookReceiver::builder()
        .default_reply(Reply::status(500))
        .start();
    let app = spawn_for(
        backend,
        &receiver,
        &[
            (
                "PETSTORE_WEBHOOK_RETRY_SCHEDULE",
                "0s,500ms,500ms,500ms,500ms,500ms,500ms,500ms",
            ),
            ("PETSTORE_WEBHOOK_DISABLE_AFTER", "1s"),
        ],
    )
    .await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    let path = format!("/v1/webhook-endpoints/{}", endpoint["id"]);
    call(&app, Method::POST, &staff, &format!("{path}/ping"), None).await;
    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "a disabling",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "failed")
        },
    )
    .await;
    assert_eq!(deliveries[0]["failure"], "endpoint_disabled");
    let disabled = call(&app, Method::GET, &staff, &path, None).await.json();
    assert_eq!(disabled["enabled"], false);
    assert_eq!(disabled["disabledReason"], "failing");
    call(&app, Method::POST, &staff, &format!("{path}/ping"), None)
        .await
        .assert_error(409, "conflict");

    receiver.answer([Reply::status(200)]);
    let before = receiver.requests().len();
    let enabled = call(
        &app,
        Method::PATCH,
        &staff,
        &path,
        Some(json!({"enabled": true})),
    )
    .await;
    assert_eq!(enabled.json()["enabled"], true);
    let ping = call(&app, Method::POST, &staff, &format!("{path}/ping"), None).await;
    assert_eq!(ping.status, 202);
    receiver
        .wait_for_requests(before + 1, DELIVERED_WITHIN)
        .await;
}

/// An answer slower than the deadline fails as `timeout`; a 2xx with an endless body succeeds
/// without the body being read to its end (the server hangs up).
async fn a_slow_endpoint_times_out_and_a_long_answer_is_not_read(backend: &str) {
    let receiver = WebhookReceiver::builder()
        .replies([
            Reply::status(200).after(Duration::from_secs(3)),
            Reply::status(200).never_ending_body(5 * 1024),
        ])
        .start();
    let app = spawn_for(
        backend,
        &receiver,
        &[
            ("PETSTORE_WEBHOOK_TIMEOUT", "1s"),
            ("PETSTORE_WEBHOOK_LEASE", "6s"),
            ("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s,100ms"),
        ],
    )
    .await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    call(
        &app,
        Method::POST,
        &staff,
        &format!("/v1/webhook-endpoints/{}/ping", endpoint["id"]),
        None,
    )
    .await;
    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "two attempts",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "succeeded")
        },
    )
    .await;
    let attempts = deliveries[0]["attempts"].as_array().expect("an array");
    assert_eq!(attempts[0]["error"], "timeout");
    assert_eq!(attempts[0]["statusCode"], Value::Null);
    assert!(
        attempts[0]["latencyMs"].as_u64().expect("a number") < 2_500,
        "{attempts:?}"
    );
    assert_eq!(attempts[1]["statusCode"], 200);
    receiver
        .wait_for_connections_closed(2, DELIVERED_WITHIN)
        .await;
}

/// A name the server resolves to loopback (as a rebinding DNS would), while loopback is not
/// allowed: the endpoint is accepted, every attempt fails `blocked_address`, and the receiver
/// is never connected to.
async fn a_name_resolving_to_an_internal_address_is_never_connected_to(backend: &str) {
    let receiver = WebhookReceiver::builder().name("hooks.rebind.test").start();
    let app = TestApp::builder(backend_named(backend))
        .setting("PETSTORE_WEBHOOK_HOSTS", "hooks.rebind.test=127.0.0.1")
        .setting(
            "PETSTORE_WEBHOOK_CA_FILE",
            receiver.ca_pem_path().to_str().expect("a UTF-8 path"),
        )
        .setting("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s")
        .spawn()
        .await;
    let staff = app.staff_key().await;
    let endpoint = register(
        &app,
        &staff,
        json!({"url": receiver.url_on("hooks.rebind.test", "/in")}),
    )
    .await;
    call(
        &app,
        Method::POST,
        &staff,
        &format!("/v1/webhook-endpoints/{}/ping", endpoint["id"]),
        None,
    )
    .await;
    let deliveries = deliveries_when(
        &app,
        &staff,
        endpoint["id"].as_i64().expect("an id"),
        "a refusal",
        |deliveries| {
            deliveries
                .first()
                .is_some_and(|delivery| delivery["status"] == "failed")
        },
    )
    .await;
    assert_eq!(deliveries[0]["attempts"][0]["error"], "blocked_address");
    assert!(receiver.requests().is_empty());
    assert_eq!(receiver.connections_closed(), 0, "a connection was made");
}

/// A delivery that succeeded is purged once it is older than the event retention; its
/// endpoint stays.
async fn finished_deliveries_are_kept_as_long_as_events(backend: &str) {
    let receiver = WebhookReceiver::start();
    let app = spawn_for(backend, &receiver, &[("PETSTORE_EVENT_RETENTION", "1s")]).await;
    let staff = app.staff_key().await;
    let endpoint = register(&app, &staff, json!({"url": receiver.url("/in")})).await;
    let id = endpoint["id"].as_i64().expect("an id");
    let ping = format!("/v1/webhook-endpoints/{id}/ping");
    assert_eq!(
        call(&app, Method::POST, &staff, &ping, None).await.status,
        202
    );
    receiver.wait_for_requests(1, DELIVERED_WITHIN).await;
    deliveries_when(&app, &staff, id, "the delivery purged", <[Value]>::is_empty).await;
    let kept = call(
        &app,
        Method::GET,
        &staff,
        &format!("/v1/webhook-endpoints/{id}"),
        None,
    )
    .await;
    assert_eq!(kept.status, 200);
}
