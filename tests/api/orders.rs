//! The store's orders (experimental), end to end: placing, moving and listing orders moves
//! their pets through the life cycle, atomically, and concurrent orders for one pet get exactly
//! one success.

use futures_util::future::join_all;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{send, TestApp};

async fn place(app: &TestApp, pet_id: i64) -> petstore_test_support::TestResponse {
    send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet_id}).to_string()),
    )
    .await
}

async fn act(app: &TestApp, order_id: i64, action: &str) -> petstore_test_support::TestResponse {
    send(
        app.post_json(&format!("/v1/store/orders/{order_id}/{action}")),
        None,
    )
    .await
}

async fn pet_status(app: &TestApp, pet_id: i64) -> String {
    let pets = app.list(&format!("?id={pet_id}")).await;
    pets[0]["status"].as_str().expect("a status").to_owned()
}

async fn an_order_moves_its_pet_from_available_to_sold(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let pet_id = pet["id"].as_i64().expect("id");

    let placed = place(&app, pet_id).await;
    assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
    assert_eq!(placed.header("x-api-stability"), Some("experimental"));
    let order = placed.json();
    let order_id = order["id"].as_i64().expect("id");
    assert_eq!(
        placed.header("location"),
        Some(format!("/v1/store/orders/{order_id}").as_str())
    );
    assert_eq!(
        order,
        json!({"id": order_id, "petId": pet_id, "quantity": 1, "shipDate": null,
               "status": "placed", "complete": false})
    );
    assert_eq!(pet_status(&app, pet_id).await, "pending");

    let again = place(&app, pet_id).await;
    let message = again.assert_error(409, "conflict");
    assert!(message.contains("pending"), "{message}");
    act(&app, order_id, "deliver")
        .await
        .assert_error(409, "conflict");

    let approved = act(&app, order_id, "approve").await;
    assert_eq!(approved.json()["status"], "approved", "{}", approved.body);
    let delivered = act(&app, order_id, "deliver").await;
    let delivered = delivered.json();
    assert_eq!(delivered["status"], "delivered");
    assert_eq!(delivered["complete"], true);
    assert!(
        delivered["shipDate"]
            .as_str()
            .is_some_and(|date| date.ends_with('Z')),
        "{delivered}"
    );
    assert_eq!(pet_status(&app, pet_id).await, "sold");
    act(&app, order_id, "cancel")
        .await
        .assert_error(409, "conflict");

    let got = send(app.get(&format!("/v1/store/orders/{order_id}")), None).await;
    assert_eq!(got.json(), delivered);
}

async fn cancelling_makes_the_pet_available_again(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Tom", "categoryId": 1}))
        .await;
    let pet_id = pet["id"].as_i64().expect("id");
    let order_id = place(&app, pet_id).await.json()["id"].as_i64().expect("id");
    let cancelled = act(&app, order_id, "cancel").await;
    assert_eq!(cancelled.json()["status"], "cancelled");
    assert_eq!(pet_status(&app, pet_id).await, "available");
    assert_eq!(place(&app, pet_id).await.status.as_u16(), 201);
}

async fn orders_are_listed_in_pages_and_filtered(app: TestApp) {
    let mut orders = Vec::new();
    for n in 0..5 {
        let pet = app
            .create_pet(json!({"name": format!("P{n}"), "categoryId": 1}))
            .await;
        let pet_id = pet["id"].as_i64().expect("id");
        orders.push(place(&app, pet_id).await.json());
    }
    act(&app, orders[2]["id"].as_i64().expect("id"), "cancel").await;

    let mut seen = Vec::new();
    let mut next = Some("/v1/store/orders?limit=2".to_owned());
    while let Some(target) = next.take() {
        let page = send(app.get(&target), None).await;
        assert_eq!(page.status.as_u16(), 200, "{}", page.body);
        seen.extend(
            page.json()
                .as_array()
                .expect("an array")
                .iter()
                .map(|o| o["id"].clone()),
        );
        next = page.header("link").map(|link| {
            let target = link
                .trim_start_matches('<')
                .split('>')
                .next()
                .unwrap_or_default();
            assert!(target.starts_with("/v1/store/orders?"), "{link}");
            assert!(link.ends_with(r#"rel="next""#), "{link}");
            target.to_owned()
        });
    }
    let all: Vec<Value> = orders.iter().map(|o| o["id"].clone()).collect();
    assert_eq!(seen, all);

    let cancelled = send(app.get("/v1/store/orders?status=cancelled"), None).await;
    assert_eq!(cancelled.json().as_array().map(Vec::len), Some(1));
    let of_pet = send(
        app.get(&format!("/v1/store/orders?petId={}", orders[4]["petId"])),
        None,
    )
    .await;
    assert_eq!(of_pet.json(), json!([orders[4]]));
    send(app.get("/v1/store/orders?sort=id"), None)
        .await
        .assert_error(400, "invalid_parameter");
    send(app.get("/v1/store/orders/999999"), None)
        .await
        .assert_error(404, "not_found");
    place(&app, 999_999).await.assert_error(404, "not_found");
}

async fn a_read_key_reads_orders_but_may_not_place_or_move_them(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let pet_id = pet["id"].as_i64().expect("id");
    let order_id = place(&app, pet_id).await.json()["id"].as_i64().expect("id");
    let read_key = app.key("reader");
    let read = |path: &str| app.client.get(app.url(path)).bearer_auth(read_key);
    assert_eq!(
        send(read("/v1/store/orders"), None).await.status.as_u16(),
        200
    );
    assert_eq!(
        send(read(&format!("/v1/store/orders/{order_id}")), None)
            .await
            .status
            .as_u16(),
        200
    );
    let write = |path: &str| {
        app.client
            .post(app.url(path))
            .bearer_auth(read_key)
            .insert_header(("Content-Type", "application/json"))
    };
    send(
        write("/v1/store/orders"),
        Some(json!({"petId": pet_id}).to_string()),
    )
    .await
    .assert_error(403, "forbidden");
    send(write(&format!("/v1/store/orders/{order_id}/cancel")), None)
        .await
        .assert_error(403, "forbidden");
    assert_eq!(pet_status(&app, pet_id).await, "pending", "nothing moved");
}

/// Fifty clients order the same pet at once: one order, forty-nine conflicts, the pet pending.
async fn fifty_concurrent_orders_for_one_pet_get_one_201(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Popular", "categoryId": 1}))
        .await;
    let pet_id = pet["id"].as_i64().expect("id");
    let answers = join_all((0..50).map(|_| place(&app, pet_id))).await;
    let created = answers.iter().filter(|a| a.status.as_u16() == 201).count();
    let conflicts = answers.iter().filter(|a| a.status.as_u16() == 409).count();
    assert_eq!((created, conflicts), (1, 49));
    assert_eq!(pet_status(&app, pet_id).await, "pending");
}

on_backends!(
    [memory, sqlite, postgres]
    an_order_moves_its_pet_from_available_to_sold,
    cancelling_makes_the_pet_available_again,
    orders_are_listed_in_pages_and_filtered,
    fifty_concurrent_orders_for_one_pet_get_one_201,
);

mod with_a_reader {
    use super::*;

    /// A server with a `read` key named `reader` beside its `write` key.
    async fn spawn(backend: &str) -> TestApp {
        TestApp::builder(petstore_test_support::backend_named(backend))
            .key("reader", &["--scope", "read"])
            .spawn()
            .await
    }

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::spawn,
        [memory, sqlite, postgres]
        a_read_key_reads_orders_but_may_not_place_or_move_them
    );
}
