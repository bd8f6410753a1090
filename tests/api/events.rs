//! The event feed end to end: every change of a pet, an order or a category is in
//! `GET /v1/events`, in commit order, with its resource as the resource's own operations
//! answered it; a key reads its own orders' events and no other key's; the feed pages by
//! `Link` with a cursor bound to the key and the types; events past the retention are purged
//! and a cursor from before them is 410. Refusals that come before storage run on `memory:`.
//!
//! On SQLite and memory an event is readable as soon as its change was answered. On PostgreSQL
//! an event is readable once every transaction older than its own ended (the feed's order
//! across instances depends on it; docs/api.md), so there the reads poll with a deadline.

use std::time::Duration;

use awc::http::Method;
use serde_json::{json, Value};

use petstore_test_support::{eventually, on_backends, send, Backend, TestApp, TestResponse};

on_backends!(
    [memory, sqlite, postgres]
    every_change_is_in_the_feed_in_order_with_its_resource_as_answered,
    a_key_reads_its_own_orders_events_and_no_other_keys,
    the_feed_pages_by_link_and_filters_by_type,
);

/// Refused before storage, or the same on every backend.
mod refused {
    use super::*;

    on_backends!(
        [memory]
        a_cursor_works_only_for_its_key_and_types_and_bad_parameters_are_400,
        the_feed_needs_a_key,
    );
}

/// Past the retention: a server keeping events for a second.
mod retention {
    use super::*;

    async fn spawn_forgetful(backend: &str) -> TestApp {
        TestApp::builder(petstore_test_support::backend_named(backend))
            .setting("PETSTORE_EVENT_RETENTION", "1s")
            .spawn()
            .await
    }

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::spawn_forgetful,
        [memory, sqlite, postgres]
        a_cursor_from_before_purged_events_is_410_and_a_fresh_read_starts_over
    );
}

/// Where the `Link: <...>; rel="next"` of `response` points: the feed, always.
pub(crate) fn next_of(response: &TestResponse) -> String {
    let link = response.header("link").expect("every page links on");
    assert!(link.ends_with(r#"rel="next""#), "not a next link: {link}");
    let target = &link[link.find('<').expect("a target") + 1..link.find('>').expect("a target")];
    assert!(
        target.starts_with("/v1/events?"),
        "the link leaves the feed: {target}"
    );
    target.to_owned()
}

async fn call(
    app: &TestApp,
    method: Method,
    key: &str,
    path: &str,
    body: Option<Value>,
) -> TestResponse {
    let request = app.client.request(method, app.url(path)).bearer_auth(key);
    match body {
        Some(body) => {
            let content_type = if path.starts_with("/v1/pets/") {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            send(
                request.insert_header(("Content-Type", content_type)),
                Some(body.to_string()),
            )
            .await
        }
        None => send(request, None).await,
    }
}

async fn ok(app: &TestApp, method: Method, key: &str, path: &str, body: Option<Value>) -> Value {
    let response = call(app, method.clone(), key, path, body).await;
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

/// The events `key` reads from `path` on, following `Link` to the end, once they number at
/// least `expected`: at once on SQLite and memory, within a deadline on PostgreSQL.
async fn read_feed(app: &TestApp, key: &str, path: &str, expected: usize) -> Vec<Value> {
    let read = async || -> Vec<Value> {
        let mut events = Vec::new();
        let mut next = path.to_owned();
        loop {
            let page = call(app, Method::GET, key, &next, None).await;
            assert_eq!(page.status.as_u16(), 200, "{next}: {}", page.body);
            let batch = page.json().as_array().expect("an array").clone();
            let more = page.header("x-more-events") == Some("true");
            next = next_of(&page);
            events.extend(batch);
            if !more {
                return events;
            }
        }
    };
    if app.backend != Backend::Postgres {
        let events = read().await;
        assert!(
            events.len() >= expected,
            "{} of {expected} events: {events:?}",
            events.len()
        );
        return events;
    }
    eventually(Duration::from_secs(10), "the events readable", async || {
        let events = read().await;
        if events.len() >= expected {
            Ok(events)
        } else {
            Err(events.len())
        }
    })
    .await
}

fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().expect("a type"))
        .collect()
}

async fn every_change_is_in_the_feed_in_order_with_its_resource_as_answered(app: TestApp) {
    let staff = app.staff_key().await;
    let created = ok(
        &app,
        Method::POST,
        &app.api_key,
        "/v1/pets",
        Some(json!({"name": "Rex", "categoryId": 1, "tags": ["small"]})),
    )
    .await;
    let pet_path = format!("/v1/pets/{}", created["id"]);
    let renamed = ok(
        &app,
        Method::PATCH,
        &staff,
        &pet_path,
        Some(json!({"name": "Max"})),
    )
    .await;
    let order = ok(
        &app,
        Method::POST,
        &app.api_key,
        "/v1/store/orders",
        Some(json!({"petId": created["id"]})),
    )
    .await;
    let order_path = format!("/v1/store/orders/{}", order["id"]);
    ok(
        &app,
        Method::POST,
        &staff,
        &format!("{order_path}/approve"),
        None,
    )
    .await;
    let delivered = ok(
        &app,
        Method::POST,
        &staff,
        &format!("{order_path}/deliver"),
        None,
    )
    .await;
    let category = ok(
        &app,
        Method::POST,
        &staff,
        "/v1/categories",
        Some(json!({"name": "Dogs"})),
    )
    .await;
    let sold = ok(
        &app,
        Method::GET,
        &app.api_key,
        &format!("/v1/pets?id={}", created["id"]),
        None,
    )
    .await;

    let events = read_feed(&app, &staff, "/v1/events", 8).await;
    assert_eq!(
        types(&events),
        [
            "pet.created",
            "pet.updated",
            "pet.updated",
            "order.placed",
            "order.approved",
            "order.delivered",
            "pet.updated",
            "category.created",
        ],
        "{events:?}"
    );
    assert_eq!(events[0]["data"], created);
    assert_eq!(events[1]["data"], renamed);
    assert_eq!(events[3]["data"]["status"], "placed");
    assert_eq!(events[5]["data"], delivered);
    assert_eq!(events[6]["data"], sold[0]);
    assert_eq!(events[7]["data"], category);
    for event in &events {
        let id = event["id"].as_str().expect("an id");
        assert!(id.starts_with("evt_") && id.len() == 36, "{id}");
        assert_eq!(event["payloadVersion"], 1);
        assert!(
            event["timestamp"]
                .as_str()
                .is_some_and(|at| at.ends_with('Z')),
            "{event}"
        );
    }
    let mut ids: Vec<&str> = events
        .iter()
        .map(|event| event["id"].as_str().unwrap_or_default())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "ids are unique");

    // Removal is an event too, carrying the pet as it was.
    ok(&app, Method::DELETE, &staff, &pet_path, None).await;
    let all = read_feed(&app, &staff, "/v1/events", 9).await;
    assert_eq!(
        all.last().map(|event| event["type"].clone()),
        Some(json!("pet.removed"))
    );
    assert_eq!(
        all.last().map(|event| event["data"]["name"].clone()),
        Some(json!("Max"))
    );
}

async fn a_key_reads_its_own_orders_events_and_no_other_keys(app: TestApp) {
    let staff = app.staff_key().await;
    let other = app
        .issue_key(&["--name", "other shop", "--scope", "write"])
        .await;
    for (key, name) in [(&app.api_key, "Mine"), (&other, "Theirs")] {
        let pet = ok(
            &app,
            Method::POST,
            key,
            "/v1/pets",
            Some(json!({"name": name, "categoryId": 1})),
        )
        .await;
        ok(
            &app,
            Method::POST,
            key,
            "/v1/store/orders",
            Some(json!({"petId": pet["id"]})),
        )
        .await;
    }
    let everything = read_feed(&app, &staff, "/v1/events", 6).await;
    assert_eq!(everything.len(), 6, "{everything:?}");

    let mine = read_feed(&app, &app.api_key, "/v1/events", 5).await;
    let orders: Vec<&Value> = mine
        .iter()
        .filter(|event| event["type"] == "order.placed")
        .collect();
    assert_eq!(orders.len(), 1, "{mine:?}");
    let own_order = ok(
        &app,
        Method::GET,
        &app.api_key,
        &format!("/v1/store/orders/{}", orders[0]["data"]["id"]),
        None,
    )
    .await;
    assert_eq!(orders[0]["data"], own_order);
    // Both keys see both pets' events: pets are the shop's, orders their placer's.
    assert_eq!(
        mine.iter()
            .filter(|event| event["type"] == "pet.created")
            .count(),
        2
    );
}

async fn the_feed_pages_by_link_and_filters_by_type(app: TestApp) {
    for n in 0..5 {
        app.create_pet(json!({"name": format!("Pet {n}"), "categoryId": 1}))
            .await;
    }
    let all = read_feed(&app, &app.api_key, "/v1/events?limit=2", 5).await;
    let names: Vec<&str> = all
        .iter()
        .map(|event| event["data"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["Pet 0", "Pet 1", "Pet 2", "Pet 3", "Pet 4"]);

    let first = call(&app, Method::GET, &app.api_key, "/v1/events?limit=2", None).await;
    assert_eq!(first.header("x-more-events"), Some("true"));
    // At the end the feed still links on: read again later for what happens next.
    let end = read_feed(&app, &app.api_key, "/v1/events?limit=100", 5).await;
    assert_eq!(end.len(), 5);
    let last_page = call(
        &app,
        Method::GET,
        &app.api_key,
        "/v1/events?limit=100",
        None,
    )
    .await;
    assert_eq!(last_page.header("x-more-events"), Some("false"));
    let later = next_of(&last_page);
    app.create_pet(json!({"name": "Later", "categoryId": 1}))
        .await;
    let since = read_feed(&app, &app.api_key, &later, 1).await;
    assert_eq!(types(&since), ["pet.created"]);
    assert_eq!(since[0]["data"]["name"], "Later");

    // `data` is the pet exactly as createPet wrote it, member order included.
    let created = call(
        &app,
        Method::POST,
        &app.api_key,
        "/v1/pets",
        Some(json!({"name": "Verbatim", "categoryId": 2, "tags": ["b", "a"]})),
    )
    .await;
    assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    let feed = eventually(
        Duration::from_secs(10),
        "the create's event readable",
        async || {
            let page = call(&app, Method::GET, &app.api_key, &later, None).await;
            if page.body.contains("Verbatim") {
                Ok(page.body)
            } else {
                Err(page.body)
            }
        },
    )
    .await;
    assert!(
        feed.contains(&format!("\"data\":{}", created.body)),
        "{feed} does not hold {}",
        created.body
    );

    let removals = call(
        &app,
        Method::GET,
        &app.api_key,
        "/v1/events?types=pet.removed,order.*",
        None,
    )
    .await;
    assert_eq!(removals.status.as_u16(), 200, "{}", removals.body);
    assert_eq!(removals.json(), json!([]));
}

async fn a_cursor_works_only_for_its_key_and_types_and_bad_parameters_are_400(app: TestApp) {
    let other = app
        .issue_key(&["--name", "other shop", "--scope", "read"])
        .await;
    let page = call(
        &app,
        Method::GET,
        &app.api_key,
        "/v1/events?types=pet.*",
        None,
    )
    .await;
    let next = next_of(&page);
    let cursor = next.split("cursor=").nth(1).expect("a cursor").to_owned();
    for (key, path) in [
        (&other, format!("/v1/events?types=pet.*&cursor={cursor}")),
        (&app.api_key, format!("/v1/events?cursor={cursor}")),
        (
            &app.api_key,
            format!("/v1/events?types=pet.*&cursor={cursor}x"),
        ),
    ] {
        let refused = call(&app, Method::GET, key, &path, None).await;
        let message = refused.assert_error(400, "invalid_parameter");
        assert!(message.contains("`cursor`"), "{path}: {message}");
    }
    for (query, named) in [
        ("types=pet.sold", "`types`"),
        ("limit=101", "`limit`"),
        ("after=3", "`after`"),
    ] {
        let refused = call(
            &app,
            Method::GET,
            &app.api_key,
            &format!("/v1/events?{query}"),
            None,
        )
        .await;
        let message = refused.assert_error(400, "invalid_parameter");
        assert!(message.contains(named), "{query}: {message}");
    }
}

async fn the_feed_needs_a_key(app: TestApp) {
    let response = send(app.client.get(app.url("/v1/events")), None).await;
    response.assert_error(401, "unauthorized");
}

async fn a_cursor_from_before_purged_events_is_410_and_a_fresh_read_starts_over(app: TestApp) {
    // Read at the (empty) start: the cursor stands before everything written later.
    let start = call(&app, Method::GET, &app.api_key, "/v1/events", None).await;
    assert_eq!(start.json(), json!([]));
    let from_start = next_of(&start);
    app.create_pet(json!({"name": "Brief", "categoryId": 1}))
        .await;
    // The purge runs every quarter of the retention: the event is gone within about a second
    // and a half, and the cursor with it.
    let gone = eventually(Duration::from_secs(10), "the event purged", async || {
        let response = call(&app, Method::GET, &app.api_key, &from_start, None).await;
        if response.status.as_u16() == 410 {
            Ok(response)
        } else {
            Err(response.body)
        }
    })
    .await;
    let message = gone.assert_error(410, "gone");
    assert!(message.contains("no longer kept"), "{message}");
    let fresh = call(&app, Method::GET, &app.api_key, "/v1/events", None).await;
    assert_eq!(fresh.status.as_u16(), 200, "{}", fresh.body);
    assert_eq!(fresh.json(), json!([]));
}
