//! `GET /v1/pets` (listPets): ordering, the limit and its bounds, the status filter, next links.

use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{next_link_target, send, NextLinks, TestApp};

async fn create_many(app: &TestApp, count: usize, status: &str) -> Vec<Value> {
    let mut pets = Vec::with_capacity(count);
    for n in 0..count {
        pets.push(
            app.create_pet(
                json!({"name": format!("{status} {n}"), "categoryId": 1, "status": status}),
            )
            .await,
        );
    }
    pets
}

fn ids(pets: &[Value]) -> Vec<i64> {
    pets.iter()
        .map(|pet| pet["id"].as_i64().expect("id"))
        .collect()
}

async fn an_empty_store_lists_a_bare_empty_array(app: TestApp) {
    let response = send(app.get("/v1/pets"), None).await;
    assert_eq!(response.status.as_u16(), 200);
    assert_eq!(response.json(), json!([]));
    assert_eq!(response.header("link"), None);
}

async fn lists_in_id_order_20_by_default(app: TestApp) {
    let created = create_many(&app, 25, "available").await;
    let listed = app.list("").await;
    assert_eq!(listed.len(), 20);
    assert_eq!(listed, created[..20].to_vec());
    let listed_ids = ids(&listed);
    assert!(
        listed_ids.windows(2).all(|pair| pair[0] < pair[1]),
        "{listed_ids:?}"
    );
}

async fn limit_bounds_are_honoured(app: TestApp) {
    let created = create_many(&app, 101, "pending").await;
    assert_eq!(app.list("?limit=1").await, created[..1].to_vec());
    assert_eq!(ids(&app.list("?limit=100").await), ids(&created[..100]));
    assert_eq!(app.list("?limit=7").await.len(), 7);
}

async fn the_status_filter_returns_only_that_status(app: TestApp) {
    let available = create_many(&app, 3, "available").await;
    let sold = create_many(&app, 2, "sold").await;
    let pending = create_many(&app, 1, "pending").await;
    assert_eq!(app.list("?status=sold").await, sold);
    assert_eq!(app.list("?status=available").await, available);
    assert_eq!(app.list("?status=pending&limit=5").await, pending);
}

/// Each query is refused with 400 `invalid_parameter` naming the parameter.
const INVALID_QUERIES: &[(&str, &str)] = &[
    ("limit=0", "limit"),
    ("limit=101", "limit"),
    ("limit=-1", "limit"),
    ("limit=abc", "limit"),
    ("limit=1.5", "limit"),
    ("limit=", "limit"),
    ("limit=99999999999999999999", "limit"),
    ("status=SOLD", "status"),
    ("status=", "status"),
    ("status=adopted", "status"),
];

async fn invalid_parameters_are_refused_naming_them(app: TestApp) {
    for (query, parameter) in INVALID_QUERIES {
        let response = send(app.get(&format!("/v1/pets?{query}")), None).await;
        let message = response.assert_error(400, "invalid_parameter");
        assert!(message.contains(parameter), "{query}: {message}");
    }
}

async fn next_links_visit_every_matching_pet_once_in_order(app: TestApp) {
    let mut sold = Vec::new();
    for n in 0..12 {
        let status = if n % 3 == 0 { "sold" } else { "available" };
        let pet = app
            .create_pet(json!({"name": format!("p{n}"), "categoryId": 1, "status": status}))
            .await;
        if status == "sold" {
            sold.push(pet);
        }
    }
    let mut seen = Vec::new();
    let mut pages = NextLinks::from("/v1/pets?limit=3&status=sold");
    let mut count = 0;
    while let Some(page) = pages.next_page(&app).await {
        seen.extend(page.pets);
        count += 1;
        if count == 1 {
            // Pets created between pages still show up, once, in order.
            sold.push(
                app.create_pet(json!({"name": "late", "categoryId": 1, "status": "sold"}))
                    .await,
            );
        }
    }
    assert_eq!(seen, sold);
}

/// The `cursor` of a `next` link, and the link's path before it.
fn split_cursor(next: &str) -> (&str, &str) {
    next.split_once("&cursor=")
        .expect("a next link carries a cursor")
}

/// Regression: cursors were unsigned (`v1:<id>` in base64), so an edited one silently started a
/// page elsewhere. Now any change, or reuse with another `status`, is 400 `invalid_parameter`.
async fn tampered_or_misused_cursors_are_refused(app: TestApp) {
    create_many(&app, 3, "sold").await;
    let first = send(app.get("/v1/pets?limit=1&status=sold"), None).await;
    let next = next_link_target(first.header("link").expect("a next link"));
    let (_, cursor) = split_cursor(&next);

    let mut tampered: Vec<char> = cursor.chars().collect();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == 'A' { 'B' } else { 'A' };
    let tampered: String = tampered.into_iter().collect();
    let forged = base64_unsigned_cursor(1);
    for query in [
        format!("limit=1&status=sold&cursor={tampered}"),
        format!("limit=1&status=sold&cursor={}", &cursor[1..]),
        format!("limit=1&status=sold&cursor={forged}"),
        format!("limit=1&status=pending&cursor={cursor}"),
        format!("limit=1&cursor={cursor}"),
    ] {
        let response = send(app.get(&format!("/v1/pets?{query}")), None).await;
        let message = response.assert_error(400, "invalid_parameter");
        assert!(message.contains("`cursor`"), "{query}: {message}");
    }

    // The untouched link still works, also with another page size.
    let response = send(app.get(&next), None).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    let resized = send(
        app.get(&format!("/v1/pets?limit=5&status=sold&cursor={cursor}")),
        None,
    )
    .await;
    assert_eq!(resized.json().as_array().map(Vec::len), Some(2));
}

/// The cursor format before it was signed: base64url of `v1:<id>`.
fn base64_unsigned_cursor(id: i64) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("v1:{id}"))
}

/// `?id=...` (getPet's replacement): the pets with those ids that exist, in id order, filtered
/// and paged like any listing.
async fn pets_are_looked_up_by_id(app: TestApp) {
    let available = create_many(&app, 5, "available").await;
    let sold = create_many(&app, 2, "sold").await;
    let id = |pet: &Value| pet["id"].as_i64().expect("an id");
    let query = format!(
        "/v1/pets?id={}&id={}&id={}&id=999999",
        id(&sold[1]),
        id(&available[3]),
        id(&available[0])
    );
    let found = app.list_following_next_links(&query).await;
    assert_eq!(
        found,
        vec![available[0].clone(), available[3].clone(), sold[1].clone()]
    );
    let only_sold = app
        .list(&format!("{}&status=sold", &query["/v1/pets".len()..]))
        .await;
    assert_eq!(only_sold, vec![sold[1].clone()]);
    // One at a time, following `Link`, keeps the ids.
    let paged = app
        .list_following_next_links(&format!("{query}&limit=1"))
        .await;
    assert_eq!(paged, found);
}

async fn unknown_query_parameters_are_refused_by_name(app: TestApp) {
    for (query, name) in [("?stauts=sold", "stauts"), ("?limit=5&petId=3", "petId")] {
        let response = send(app.get(&format!("/v1/pets{query}")), None).await;
        let message = response.assert_error(400, "invalid_parameter");
        assert!(message.contains(&format!("`{name}`")), "{message}");
    }
    let too_many: Vec<String> = (1..=101).map(|n| format!("id={n}")).collect();
    let response = send(app.get(&format!("/v1/pets?{}", too_many.join("&"))), None).await;
    response.assert_error(400, "invalid_parameter");
}

on_backends!(
    [memory, sqlite, postgres]
    pets_are_looked_up_by_id,
    unknown_query_parameters_are_refused_by_name,
    an_empty_store_lists_a_bare_empty_array,
    lists_in_id_order_20_by_default,
    limit_bounds_are_honoured,
    the_status_filter_returns_only_that_status,
    next_links_visit_every_matching_pet_once_in_order,
);

/// Refused before storage is touched: the backend makes no difference.
mod refused_before_storage {
    use super::*;
    on_backends!(
        [memory]
        invalid_parameters_are_refused_naming_them,
        tampered_or_misused_cursors_are_refused,
    );
}
