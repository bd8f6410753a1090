//! Every operation the published OpenAPI document says takes `Idempotency-Key`, called as a
//! client generated from that document would: a retry with the same key and request is
//! replayed byte for byte, and the key sent again with another request is 422. An operation
//! the document adds without a way to call it here fails the test, so none is left out.

use actix_web::http::Method;
use serde_json::{json, Value};

use std::time::Duration;

use petstore_test_support::{eventually, send, TestApp, TestResponse};

/// A keyed call: the document's method and path with its parameters filled in, the body, and
/// the API key that may make it.
struct Call {
    method: Method,
    path: String,
    body: Option<Value>,
    key: String,
}

/// Sends `call` with `Idempotency-Key: idempotency_key`.
async fn send_keyed(app: &TestApp, call: &Call, idempotency_key: &str) -> TestResponse {
    let request = app
        .client
        .request(call.method.clone(), app.url(&format!("/v1{}", call.path)))
        .bearer_auth(&call.key)
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Idempotency-Key", idempotency_key));
    send(request, call.body.as_ref().map(Value::to_string)).await
}

/// `(method, path, operationId)` of every operation documented with `Idempotency-Key`.
fn keyed_operations(doc: &Value) -> Vec<(String, String, String)> {
    let mut keyed = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let takes_a_key = operation["parameters"]
                .as_array()
                .is_some_and(|parameters| {
                    parameters
                        .iter()
                        .any(|parameter| parameter["name"] == "Idempotency-Key")
                });
            if takes_a_key {
                let id = operation["operationId"].as_str().expect("an operationId");
                keyed.push((method.clone(), path.clone(), id.to_owned()));
            }
        }
    }
    keyed
}

async fn new_pet(app: &TestApp) -> i64 {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    pet["id"].as_i64().expect("a pet id")
}

/// A new category's id, made by the staff.
async fn new_category(app: &TestApp, staff: &str, name: &str) -> i64 {
    let created = send(
        app.post_json_as(staff, "/v1/categories"),
        Some(json!({"name": name}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.json()["id"].as_i64().expect("a category id")
}

/// A new order of the default key, moved by the staff through `actions` first.
async fn new_order(app: &TestApp, staff: &str, actions: &[&str]) -> i64 {
    let pet = new_pet(app).await;
    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet}).to_string()),
    )
    .await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let id = placed.json()["id"].as_i64().expect("an order id");
    for action in actions {
        let path = format!("/v1/store/orders/{id}/{action}");
        let moved = send(app.post_json_as(staff, &path), None).await;
        assert_eq!(moved.status, 200, "{}", moved.body);
    }
    id
}

/// Webhook endpoints' host: resolved by the server to an address it never connects to
/// (`PETSTORE_WEBHOOK_HOSTS`), so each attempt fails at once, without DNS.
const HOOKS: &str = "hooks.keyed.invalid";

/// A server whose webhook attempts fail at once and are retried only a day later, so that a
/// delivery stays still (pending, not leased) once its first attempt is made.
async fn spawn_keyed(backend: &str) -> TestApp {
    TestApp::builder(petstore_test_support::backend_named(backend))
        .setting("PETSTORE_WEBHOOK_HOSTS", &format!("{HOOKS}=10.0.0.1"))
        .setting("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s,24h")
        .spawn()
        .await
}

/// A new webhook endpoint's id, made by the staff.
async fn new_endpoint(app: &TestApp, staff: &str) -> i64 {
    let body = json!({"url": format!("https://{HOOKS}/in")}).to_string();
    let created = send(app.post_json_as(staff, "/v1/webhook-endpoints"), Some(body)).await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.json()["id"].as_i64().expect("an endpoint id")
}

/// A ping's delivery once its first attempt failed: `(endpoint, delivery)`.
async fn attempted_delivery(app: &TestApp, staff: &str) -> (i64, i64) {
    let endpoint = new_endpoint(app, staff).await;
    let ping = send(
        app.post_json_as(staff, &format!("/v1/webhook-endpoints/{endpoint}/ping")),
        None,
    )
    .await;
    assert_eq!(ping.status, 202, "{}", ping.body);
    let delivery = ping.json()["id"].as_i64().expect("a delivery id");
    let path = format!("/v1/webhook-endpoints/{endpoint}/deliveries/{delivery}");
    eventually(
        Duration::from_secs(15),
        "the ping's first attempt",
        async || {
            let got = send(app.get_as(staff, &path), None).await.json();
            match got["attempts"].as_array().map(Vec::len) {
                Some(1) => Ok(()),
                _ => Err(got.to_string()),
            }
        },
    )
    .await;
    (endpoint, delivery)
}

/// Two different calls of `operation` (`method` at `path`), each able to succeed once.
async fn two_calls(app: &TestApp, operation: &str, method: &str, path: &str) -> (Call, Call) {
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).expect("a method");
    let staff = app.staff_key().await;
    let order_action = |id: i64, key: &str| Call {
        method: method.clone(),
        path: path.replace("{orderId}", &id.to_string()),
        body: None,
        key: key.to_owned(),
    };
    match operation {
        "createPet" => {
            let call = |name: &str| Call {
                method: method.clone(),
                path: path.to_owned(),
                body: Some(json!({"name": name, "categoryId": 1})),
                key: app.api_key.clone(),
            };
            (call("Rex"), call("Tom"))
        }
        "placeOrder" => {
            let call = |pet: i64| Call {
                method: method.clone(),
                path: path.to_owned(),
                body: Some(json!({"petId": pet})),
                key: app.api_key.clone(),
            };
            (call(new_pet(app).await), call(new_pet(app).await))
        }
        "updatePet" => {
            let call = |pet: i64| Call {
                method: method.clone(),
                path: path.replace("{petId}", &pet.to_string()),
                body: Some(json!({"name": "Renamed"})),
                key: staff.clone(),
            };
            (call(new_pet(app).await), call(new_pet(app).await))
        }
        "createCategory" => {
            let call = |name: &str| Call {
                method: method.clone(),
                path: path.to_owned(),
                body: Some(json!({"name": name})),
                key: staff.clone(),
            };
            (call("Keyed A"), call("Keyed B"))
        }
        "updateCategory" => {
            let call = |category: i64, name: &str| Call {
                method: method.clone(),
                path: path.replace("{categoryId}", &category.to_string()),
                body: Some(json!({"name": name})),
                key: staff.clone(),
            };
            (
                call(new_category(app, &staff, "To rename 1").await, "Renamed 1"),
                call(new_category(app, &staff, "To rename 2").await, "Renamed 2"),
            )
        }
        "approveOrder" => (
            order_action(new_order(app, &staff, &[]).await, &staff),
            order_action(new_order(app, &staff, &[]).await, &staff),
        ),
        "deliverOrder" => (
            order_action(new_order(app, &staff, &["approve"]).await, &staff),
            order_action(new_order(app, &staff, &["approve"]).await, &staff),
        ),
        "cancelOrder" => (
            order_action(new_order(app, &staff, &[]).await, &app.api_key),
            order_action(new_order(app, &staff, &[]).await, &app.api_key),
        ),
        "createWebhookEndpoint" => {
            let call = |n: u8| Call {
                method: method.clone(),
                path: path.to_owned(),
                body: Some(json!({"url": format!("https://{HOOKS}/{n}")})),
                key: staff.clone(),
            };
            (call(1), call(2))
        }
        "updateWebhookEndpoint" => {
            let call = |endpoint: i64| Call {
                method: method.clone(),
                path: path.replace("{endpointId}", &endpoint.to_string()),
                body: Some(json!({"eventTypes": ["pet.*"]})),
                key: staff.clone(),
            };
            (
                call(new_endpoint(app, &staff).await),
                call(new_endpoint(app, &staff).await),
            )
        }
        "rotateWebhookSecret" | "pingWebhookEndpoint" => {
            let call = |endpoint: i64| Call {
                method: method.clone(),
                path: path.replace("{endpointId}", &endpoint.to_string()),
                body: None,
                key: staff.clone(),
            };
            (
                call(new_endpoint(app, &staff).await),
                call(new_endpoint(app, &staff).await),
            )
        }
        "retryWebhookDelivery" => {
            let call = |(endpoint, delivery): (i64, i64)| Call {
                method: method.clone(),
                path: path
                    .replace("{endpointId}", &endpoint.to_string())
                    .replace("{deliveryId}", &delivery.to_string()),
                body: None,
                key: staff.clone(),
            };
            (
                call(attempted_delivery(app, &staff).await),
                call(attempted_delivery(app, &staff).await),
            )
        }
        other => panic!(
            "the document says {other} takes Idempotency-Key: add how to call it to \
             tests/api/keyed_operations.rs"
        ),
    }
}

async fn every_documented_keyed_operation_replays_and_refuses_reuse(app: TestApp) {
    let doc = send(app.get("/v1/openapi.json"), None).await.json();
    let operations = keyed_operations(&doc);
    assert!(operations.len() >= 6, "{operations:?}");
    for (method, path, operation) in operations {
        let (call, other) = two_calls(&app, &operation, &method, &path).await;
        let key = format!("contract-{operation}");
        let first = send_keyed(&app, &call, &key).await;
        assert!(first.status.is_success(), "{operation}: {}", first.body);
        assert_eq!(first.header("idempotent-replayed"), None, "{operation}");

        let retry = send_keyed(&app, &call, &key).await;
        assert_eq!(retry.status, first.status, "{operation}: {}", retry.body);
        assert_eq!(
            retry.header("idempotent-replayed"),
            Some("true"),
            "{operation}"
        );
        if first.json().get("secret").is_some() {
            // A secret is answered once: the replay is the same answer without it.
            let mut without_secret = first.json();
            without_secret
                .as_object_mut()
                .expect("an object")
                .remove("secret");
            assert_eq!(
                retry.json(),
                without_secret,
                "{operation}: replayed without the secret"
            );
            assert!(retry.json().get("secret").is_none(), "{operation}");
        } else {
            assert_eq!(
                retry.body, first.body,
                "{operation}: replayed byte for byte"
            );
        }
        assert_eq!(
            retry.header("location"),
            first.header("location"),
            "{operation}"
        );

        send_keyed(&app, &other, &key)
            .await
            .assert_error(422, "idempotency_key_reused");
        // The other request is carried out under a key of its own.
        let fresh = send_keyed(&app, &other, &format!("{key}-other")).await;
        assert!(fresh.status.is_success(), "{operation}: {}", fresh.body);
    }
}

petstore_test_support::database::on_backends!(
    #[actix_web::test] super::spawn_keyed,
    [memory, sqlite, postgres]
    every_documented_keyed_operation_replays_and_refuses_reuse,
);
