//! The store's orders (experimental), end to end: placing, moving and listing orders moves
//! their pets through the life cycle, atomically, and concurrent orders for one pet get exactly
//! one success. Orders have owners: a key sees and cancels its own (another's is 404), the staff
//! (a `store` key) see every order and alone approve and deliver, a key has a bound on its open
//! orders that holds under concurrency, and orders from before owners are the staff's only.
//! Order ids are random below 2^53, and listings go by id.

use futures_util::future::join_all;
use serde_json::json;

use petstore_test_support::on_backends;
use petstore_test_support::{send, Backend, TestApp, TestResponse};

async fn place(app: &TestApp, pet_id: i64) -> TestResponse {
    place_as(app, &app.api_key, pet_id).await
}

async fn place_as(app: &TestApp, key: &str, pet_id: i64) -> TestResponse {
    send(
        app.post_json_as(key, "/v1/store/orders"),
        Some(json!({"petId": pet_id}).to_string()),
    )
    .await
}

/// `action` on the order with the app's `write` key: cancelling its own.
async fn act(app: &TestApp, order_id: i64, action: &str) -> TestResponse {
    act_as(app, &app.api_key, order_id, action).await
}

async fn act_as(app: &TestApp, key: &str, order_id: i64, action: &str) -> TestResponse {
    send(
        app.post_json_as(key, &format!("/v1/store/orders/{order_id}/{action}")),
        None,
    )
    .await
}

async fn get_as(app: &TestApp, key: &str, path: &str) -> TestResponse {
    send(app.get_as(key, path), None).await
}

/// A new available pet's id.
async fn new_pet(app: &TestApp, name: &str) -> i64 {
    let pet = app.create_pet(json!({"name": name, "categoryId": 1})).await;
    pet["id"].as_i64().expect("id")
}

fn ids(listing: &TestResponse) -> Vec<i64> {
    assert_eq!(listing.status.as_u16(), 200, "{}", listing.body);
    listing
        .json()
        .as_array()
        .expect("an array")
        .iter()
        .map(|order| order["id"].as_i64().expect("id"))
        .collect()
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
    // Approving and delivering are the staff's.
    let staff = app.staff_key().await;
    act_as(&app, &staff, order_id, "deliver")
        .await
        .assert_error(409, "conflict");

    let approved = act_as(&app, &staff, order_id, "approve").await;
    assert_eq!(approved.json()["status"], "approved", "{}", approved.body);
    let delivered = act_as(&app, &staff, order_id, "deliver").await;
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
    // By id, which is not the placing order.
    let mut all: Vec<i64> = orders
        .iter()
        .map(|o| o["id"].as_i64().expect("id"))
        .collect();
    all.sort_unstable();
    let seen: Vec<i64> = seen.iter().map(|id| id.as_i64().expect("id")).collect();
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
    // A read key lists its own orders: it can place none, so there are none; the write key's
    // order is not its own, so it is not found.
    assert_eq!(
        ids(&send(read("/v1/store/orders"), None).await),
        Vec::<i64>::new()
    );
    send(read(&format!("/v1/store/orders/{order_id}")), None)
        .await
        .assert_error(404, "not_found");
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
    for action in ["cancel", "approve", "deliver"] {
        send(
            write(&format!("/v1/store/orders/{order_id}/{action}")),
            None,
        )
        .await
        .assert_error(403, "forbidden");
    }
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

/// Two customers and the staff: each customer lists, gets and cancels its own orders only;
/// another's order answers exactly as a missing one does.
async fn a_write_key_sees_and_cancels_only_its_own_orders(app: TestApp) {
    let alice = app.api_key.clone();
    let bob = app.issue_key(&["--name", "bob"]).await;
    let staff = app.staff_key().await;
    let mut hers = Vec::new();
    let mut his = Vec::new();
    // Interleaved, so that a page of hers filtered afterwards would come back short.
    for n in 0..6 {
        let pet_id = new_pet(&app, &format!("P{n}")).await;
        let (key, mine) = if n % 2 == 0 {
            (&alice, &mut hers)
        } else {
            (&bob, &mut his)
        };
        let placed = place_as(&app, key, pet_id).await;
        assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
        assert!(!placed.body.contains("placedBy"), "{}", placed.body);
        mine.push(placed.json()["id"].as_i64().expect("id"));
    }
    // Listings go by id.
    hers.sort_unstable();
    his.sort_unstable();

    let first = get_as(&app, &alice, "/v1/store/orders?limit=2").await;
    assert_eq!(ids(&first), hers[..2]);
    let link = first.header("link").expect("a next page");
    let next = link
        .trim_start_matches('<')
        .split('>')
        .next()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(ids(&get_as(&app, &alice, &next).await), hers[2..]);
    assert_eq!(ids(&get_as(&app, &bob, "/v1/store/orders").await), his);
    let mut every = [hers.clone(), his.clone()].concat();
    every.sort_unstable();
    assert_eq!(ids(&get_as(&app, &staff, "/v1/store/orders").await), every);

    // Bob's order is not found for Alice, word for word like an id nobody has.
    let theirs = get_as(&app, &alice, &format!("/v1/store/orders/{}", his[0])).await;
    theirs.assert_error(404, "not_found");
    let missing = get_as(&app, &alice, "/v1/store/orders/999999").await;
    assert_eq!(
        theirs.body.replace(&his[0].to_string(), "N"),
        missing.body.replace("999999", "N")
    );
    act_as(&app, &alice, his[0], "cancel")
        .await
        .assert_error(404, "not_found");
    let still = get_as(&app, &bob, &format!("/v1/store/orders/{}", his[0])).await;
    assert_eq!(still.json()["status"], "placed", "not cancelled");

    // Their own, each; and the staff cancel anyone's.
    let cancelled = act_as(&app, &bob, his[0], "cancel").await;
    assert_eq!(
        cancelled.json()["status"],
        "cancelled",
        "{}",
        cancelled.body
    );
    let cancelled = act_as(&app, &staff, hers[0], "cancel").await;
    assert_eq!(
        cancelled.json()["status"],
        "cancelled",
        "{}",
        cancelled.body
    );
    let got = get_as(&app, &staff, &format!("/v1/store/orders/{}", his[1])).await;
    assert_eq!(got.status.as_u16(), 200, "{}", got.body);
}

/// Approving and delivering are the staff's: a `write` key gets the 403 every scope refusal is,
/// naming `store`, even on its own order.
async fn only_a_store_key_approves_and_delivers(app: TestApp) {
    let pet_id = new_pet(&app, "Rex").await;
    let order_id = place(&app, pet_id).await.json()["id"].as_i64().expect("id");
    for action in ["approve", "deliver"] {
        let refused = act(&app, order_id, action).await;
        let message = refused.assert_error(403, "forbidden");
        assert!(message.contains("`store`"), "{message}");
        assert_eq!(
            refused.header("www-authenticate"),
            Some(r#"Bearer realm="petstore", error="insufficient_scope", scope="store""#)
        );
    }
    let staff = app.staff_key().await;
    let approved = act_as(&app, &staff, order_id, "approve").await;
    assert_eq!(approved.json()["status"], "approved", "{}", approved.body);
    let delivered = act_as(&app, &staff, order_id, "deliver").await;
    assert_eq!(
        delivered.json()["status"],
        "delivered",
        "{}",
        delivered.body
    );
    // The customer still sees its order, delivered.
    let got = get_as(&app, &app.api_key, &format!("/v1/store/orders/{order_id}")).await;
    assert_eq!(got.json(), delivered.json());
}

/// An order's id is random, so that it tells a key nothing about how many orders others placed,
/// and below 2^53, so that JavaScript reads the JSON number exactly; `Location` names it.
async fn order_ids_are_random_json_safe_integers(app: TestApp) {
    let mut ids = Vec::new();
    for n in 0..6 {
        let placed = place(&app, new_pet(&app, &format!("P{n}")).await).await;
        assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
        let id = placed.json()["id"].as_i64().expect("an integer id");
        assert_eq!(
            placed.header("location"),
            Some(format!("/v1/store/orders/{id}").as_str())
        );
        ids.push(id);
    }
    assert!(ids.iter().all(|id| (1..1 << 53).contains(id)), "{ids:?}");
    assert!(
        ids.windows(2).all(|pair| pair[0].abs_diff(pair[1]) > 1),
        "consecutive ids: {ids:?}"
    );
    // Six ids drawn uniformly below 2^53 are all below 2^32 with a chance of 2^-126.
    assert!(ids.iter().any(|&id| id >= 1 << 32), "small ids: {ids:?}");
}

on_backends!(
    [memory, sqlite, postgres]
    order_ids_are_random_json_safe_integers,
    an_order_moves_its_pet_from_available_to_sold,
    cancelling_makes_the_pet_available_again,
    orders_are_listed_in_pages_and_filtered,
    fifty_concurrent_orders_for_one_pet_get_one_201,
    a_write_key_sees_and_cancels_only_its_own_orders,
    only_a_store_key_approves_and_delivers,
);

mod with_a_bound_of_two {
    use super::*;

    /// A server whose keys may have two open orders each.
    async fn spawn(backend: &str) -> TestApp {
        TestApp::builder(petstore_test_support::backend_named(backend))
            .setting("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "2")
            .spawn()
            .await
    }

    /// Two open orders, then 409 `too_many_open_orders` (not 429: waiting changes nothing)
    /// until one is approved or cancelled; another key has a bound of its own.
    async fn a_key_places_no_more_than_its_bound_of_open_orders(app: TestApp) {
        let mut pets = Vec::new();
        for n in 0..5 {
            pets.push(new_pet(&app, &format!("P{n}")).await);
        }
        let first = place(&app, pets[0]).await.json()["id"]
            .as_i64()
            .expect("id");
        assert_eq!(place(&app, pets[1]).await.status.as_u16(), 201);
        let refused = place(&app, pets[2]).await;
        let message = refused.assert_error(409, "too_many_open_orders");
        assert!(message.contains("2 open orders"), "{message}");
        assert_eq!(refused.header("retry-after"), None);
        assert_eq!(pet_status(&app, pets[2]).await, "available", "not reserved");

        let bob = app.issue_key(&["--name", "bob"]).await;
        assert_eq!(place_as(&app, &bob, pets[3]).await.status.as_u16(), 201);

        let staff = app.staff_key().await;
        let approved = act_as(&app, &staff, first, "approve").await;
        assert_eq!(approved.status.as_u16(), 200, "{}", approved.body);
        let third = place(&app, pets[2]).await;
        assert_eq!(
            third.status.as_u16(),
            201,
            "an approved order is no longer open"
        );
        place(&app, pets[4])
            .await
            .assert_error(409, "too_many_open_orders");
        act(&app, third.json()["id"].as_i64().expect("id"), "cancel").await;
        assert_eq!(
            place(&app, pets[4]).await.status.as_u16(),
            201,
            "nor a cancelled one"
        );
    }

    /// One key one order below its bound orders ten pets at once: one 201, nine 409s. On
    /// PostgreSQL each order's insert waits a moment before its commit, so that the others
    /// count while it is uncommitted: the bound holds only if they wait for the key's turn.
    async fn concurrent_orders_of_one_key_at_its_bound_get_one_201(app: TestApp) {
        if app.backend == Backend::Postgres {
            app.execute_sql(
                "CREATE FUNCTION slow_order() RETURNS trigger LANGUAGE plpgsql AS \
                 $$ BEGIN PERFORM pg_sleep(0.05); RETURN NEW; END $$; \
                 CREATE TRIGGER slow_order AFTER INSERT ON orders \
                 FOR EACH ROW EXECUTE FUNCTION slow_order();",
            );
        }
        let mut pets = Vec::new();
        for n in 0..11 {
            pets.push(new_pet(&app, &format!("P{n}")).await);
        }
        assert_eq!(place(&app, pets[0]).await.status.as_u16(), 201);
        let answers = join_all(pets[1..].iter().map(|pet| place(&app, *pet))).await;
        let placed = answers.iter().filter(|a| a.status.as_u16() == 201).count();
        let refused = answers
            .iter()
            .filter(|a| a.status.as_u16() == 409 && a.body.contains("too_many_open_orders"))
            .count();
        assert_eq!((placed, refused), (1, 9));
    }

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::spawn,
        [memory, sqlite, postgres]
        a_key_places_no_more_than_its_bound_of_open_orders,
        concurrent_orders_of_one_key_at_its_bound_get_one_201,
    );
}

mod before_owners {
    use super::*;

    /// An order placed before orders had owners (a row with no `placed_by`, as the migration
    /// leaves them): not found for a `write` key, listed, cancelled and delivered by the staff.
    async fn an_order_placed_before_owners_is_the_staffs_only(app: TestApp) {
        let pet_id = new_pet(&app, "Old").await;
        app.execute_sql(&format!(
            "UPDATE pets SET status = 'pending' WHERE id = {pet_id}; \
             INSERT INTO orders (pet_id, quantity, status) VALUES ({pet_id}, 1, 'placed');"
        ));
        let staff = app.staff_key().await;
        let every = ids(&get_as(&app, &staff, "/v1/store/orders").await);
        let [old] = every[..] else {
            panic!("one order: {every:?}");
        };
        assert_eq!(
            ids(&get_as(&app, &app.api_key, "/v1/store/orders").await),
            Vec::<i64>::new()
        );
        let path = format!("/v1/store/orders/{old}");
        get_as(&app, &app.api_key, &path)
            .await
            .assert_error(404, "not_found");
        act(&app, old, "cancel")
            .await
            .assert_error(404, "not_found");
        let got = get_as(&app, &staff, &path).await;
        assert_eq!(got.json()["status"], "placed", "{}", got.body);
        let approved = act_as(&app, &staff, old, "approve").await;
        assert_eq!(approved.json()["status"], "approved", "{}", approved.body);
        let delivered = act_as(&app, &staff, old, "deliver").await;
        assert_eq!(
            delivered.json()["status"],
            "delivered",
            "{}",
            delivered.body
        );
        assert_eq!(pet_status(&app, pet_id).await, "sold");
    }

    on_backends!([sqlite, postgres] an_order_placed_before_owners_is_the_staffs_only);

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
}
