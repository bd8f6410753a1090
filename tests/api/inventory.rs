//! The inventory end to end: `GET /v1/store/inventory` counts the live pets by status, every
//! status present, and follows creates, orders moving pets and removals within its second of
//! staleness; any key reads it, none is 401; it is a keyed read (`private, no-cache`) and, like
//! the rest of the store, experimental. Refusals before storage run on `memory:` only.

use std::time::Duration;

use awc::http::Method;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{eventually, send, TestApp, TestResponse};

on_backends!(
    [memory, sqlite, postgres]
    the_counts_follow_creates_orders_and_removals,
);

/// Refused before storage, or the same on every backend.
mod refused {
    use super::*;

    on_backends!(
        [memory]
        any_key_reads_it_and_none_is_401,
        a_query_parameter_is_400_and_another_method_405,
    );
}

const INVENTORY: &str = "/v1/store/inventory";

/// A count may be a second old, and counting again takes a moment of its own.
const STALENESS: Duration = Duration::from_secs(3);

async fn inventory(app: &TestApp, key: &str) -> TestResponse {
    send(app.get_as(key, INVENTORY), None).await
}

/// Waits until the inventory is `expected`, within its staleness.
async fn counts_become(app: &TestApp, expected: Value) {
    eventually(
        STALENESS,
        &format!("the inventory {expected}"),
        async || {
            let response = inventory(app, &app.api_key).await;
            assert_eq!(response.status.as_u16(), 200, "{}", response.body);
            let counts = response.json();
            if counts == expected {
                Ok(())
            } else {
                Err(counts)
            }
        },
    )
    .await;
}

async fn call(app: &TestApp, method: Method, key: &str, path: &str, body: Option<Value>) -> Value {
    let request = app
        .client
        .request(method.clone(), app.url(path))
        .bearer_auth(key);
    let response = match body {
        Some(body) => {
            let request = request.insert_header(("Content-Type", "application/json"));
            send(request, Some(body.to_string())).await
        }
        None => send(request, None).await,
    };
    assert!(
        response.status.is_success(),
        "{method} {path}: {} {}",
        response.status,
        response.body
    );
    if response.body.is_empty() {
        Value::Null
    } else {
        response.json()
    }
}

async fn created(app: &TestApp, status: &str) -> i64 {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1, "status": status}))
        .await;
    pet["id"].as_i64().expect("an id")
}

async fn ordered(app: &TestApp, staff: &str, pet: i64) -> i64 {
    let order = call(
        app,
        Method::POST,
        staff,
        "/v1/store/orders",
        Some(json!({"petId": pet, "quantity": 1})),
    )
    .await;
    order["id"].as_i64().expect("an order id")
}

async fn act(app: &TestApp, staff: &str, order: i64, action: &str) {
    let path = format!("/v1/store/orders/{order}/{action}");
    call(app, Method::POST, staff, &path, None).await;
}

async fn the_counts_follow_creates_orders_and_removals(app: TestApp) {
    let staff = app.staff_key().await;
    let first = inventory(&app, &app.api_key).await;
    assert_eq!(first.status.as_u16(), 200, "{}", first.body);
    assert_eq!(
        first.json(),
        json!({"available": 0, "pending": 0, "sold": 0})
    );
    assert_eq!(first.header("Cache-Control"), Some("private, no-cache"));
    assert_eq!(first.header("X-API-Stability"), Some("experimental"));

    let rex = created(&app, "available").await;
    let tom = created(&app, "available").await;
    let bo = created(&app, "available").await;
    created(&app, "sold").await;
    counts_become(&app, json!({"available": 3, "pending": 0, "sold": 1})).await;

    let for_rex = ordered(&app, &staff, rex).await;
    let for_tom = ordered(&app, &staff, tom).await;
    counts_become(&app, json!({"available": 1, "pending": 2, "sold": 1})).await;

    act(&app, &staff, for_rex, "approve").await;
    act(&app, &staff, for_rex, "deliver").await;
    act(&app, &staff, for_tom, "cancel").await;
    counts_become(&app, json!({"available": 2, "pending": 0, "sold": 2})).await;

    call(
        &app,
        Method::DELETE,
        &staff,
        &format!("/v1/pets/{bo}"),
        None,
    )
    .await;
    call(
        &app,
        Method::DELETE,
        &staff,
        &format!("/v1/pets/{rex}"),
        None,
    )
    .await;
    counts_become(&app, json!({"available": 1, "pending": 0, "sold": 1})).await;
}

async fn any_key_reads_it_and_none_is_401(app: TestApp) {
    let staff = app.staff_key().await;
    let reader = app
        .issue_key(&["--name", "reader", "--scope", "read"])
        .await;
    for key in [reader.as_str(), app.api_key.as_str(), staff.as_str()] {
        let response = inventory(&app, key).await;
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
        assert_eq!(
            response.json(),
            json!({"available": 0, "pending": 0, "sold": 0})
        );
    }
    let without = send(app.client.get(app.url(INVENTORY)), None).await;
    without.assert_error(401, "unauthorized");
    assert_eq!(without.header("X-API-Stability"), Some("experimental"));
    let wrong = inventory(&app, "not-a-key").await;
    wrong.assert_error(401, "unauthorized");
}

async fn a_query_parameter_is_400_and_another_method_405(app: TestApp) {
    let response = send(app.get(&format!("{INVENTORY}?status=sold")), None).await;
    let message = response.assert_error(400, "invalid_parameter");
    assert!(message.contains("status"), "{message}");

    let response = send(app.post_json(INVENTORY), Some("{}".to_owned())).await;
    response.assert_error(405, "method_not_allowed");
    assert_eq!(response.header("Allow"), Some("GET, HEAD"));
}
