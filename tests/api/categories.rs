//! Categories end to end: the staff (a `store` key) create, rename and remove them, any key
//! lists and gets them; names are unique regardless of case (409 naming the name), a removed
//! category is gone for every read and frees its name, the listing pages by signed cursors, a
//! retried create is replayed, and pets keep their `categoryId` whatever becomes of a category.
//! Refusals that come before storage (keys, scopes, parameters, bodies) run on `memory:` only.

use awc::http::Method;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{send, TestApp, TestResponse};

on_backends!(
    [memory, sqlite, postgres]
    a_category_is_created_read_renamed_and_removed,
    a_removed_category_frees_its_name_and_never_gives_back_its_id,
    a_name_taken_regardless_of_case_is_409_naming_it,
    the_listing_visits_every_category_once_by_signed_cursors,
    a_retried_create_is_replayed_and_a_reused_key_refused,
    pets_keep_their_category_id_whatever_becomes_of_the_category,
);

/// Refused before storage, or the same on every backend.
mod refused {
    use super::*;

    on_backends!(
        [memory]
        every_operation_refuses_a_missing_key_and_changes_need_a_store_key,
        bad_bodies_parameters_and_media_types_are_400_and_415_naming_them,
        an_id_no_category_has_is_404_for_every_operation,
    );
}

/// `method path` with `key`, and a JSON body of `content_type` when there is one.
async fn call(
    app: &TestApp,
    method: Method,
    key: &str,
    path: &str,
    body: Option<(&str, Value)>,
) -> TestResponse {
    let request = app.client.request(method, app.url(path)).bearer_auth(key);
    match body {
        Some((content_type, body)) => {
            send(
                request.insert_header(("Content-Type", content_type)),
                Some(body.to_string()),
            )
            .await
        }
        None => send(request, None).await,
    }
}

async fn create(app: &TestApp, staff: &str, name: &str) -> TestResponse {
    call(
        app,
        Method::POST,
        staff,
        "/v1/categories",
        Some(("application/json", json!({"name": name}))),
    )
    .await
}

/// A new category's id.
async fn created(app: &TestApp, staff: &str, name: &str) -> i64 {
    let response = create(app, staff, name).await;
    assert_eq!(response.status.as_u16(), 201, "{}", response.body);
    response.json()["id"].as_i64().expect("an id")
}

async fn rename(
    app: &TestApp,
    staff: &str,
    id: i64,
    content_type: &str,
    body: Value,
) -> TestResponse {
    call(
        app,
        Method::PATCH,
        staff,
        &format!("/v1/categories/{id}"),
        Some((content_type, body)),
    )
    .await
}

async fn delete(app: &TestApp, staff: &str, id: i64) -> TestResponse {
    call(
        app,
        Method::DELETE,
        staff,
        &format!("/v1/categories/{id}"),
        None,
    )
    .await
}

async fn get(app: &TestApp, id: i64) -> TestResponse {
    send(app.get(&format!("/v1/categories/{id}")), None).await
}

/// The names of one listing page.
fn names(page: &TestResponse) -> Vec<String> {
    assert_eq!(page.status.as_u16(), 200, "{}", page.body);
    page.json()
        .as_array()
        .expect("a bare array")
        .iter()
        .map(|category| category["name"].as_str().expect("a name").to_owned())
        .collect()
}

async fn a_category_is_created_read_renamed_and_removed(app: TestApp) {
    let staff = app.staff_key().await;
    let response = create(&app, &staff, "  Dogs ").await;
    assert_eq!(response.status.as_u16(), 201, "{}", response.body);
    let id = response.json()["id"].as_i64().expect("an id");
    assert_eq!(response.json(), json!({"id": id, "name": "Dogs"}));
    let location = format!("/v1/categories/{id}");
    assert_eq!(response.header("location"), Some(location.as_str()));

    // Any key reads it (the app's own is a `write` key).
    let read = get(&app, id).await;
    assert_eq!(read.status.as_u16(), 200, "{}", read.body);
    assert_eq!(read.json(), json!({"id": id, "name": "Dogs"}));
    assert_eq!(
        names(&send(app.get("/v1/categories"), None).await),
        ["Dogs"]
    );

    let renamed = rename(
        &app,
        &staff,
        id,
        "application/merge-patch+json",
        json!({"name": "Hounds"}),
    )
    .await;
    assert_eq!(renamed.status.as_u16(), 200, "{}", renamed.body);
    assert_eq!(renamed.json(), json!({"id": id, "name": "Hounds"}));
    // `application/json` is accepted for the patch too, and `{}` changes nothing.
    let unchanged = rename(&app, &staff, id, "application/json", json!({})).await;
    assert_eq!(unchanged.status.as_u16(), 200, "{}", unchanged.body);
    assert_eq!(unchanged.json(), json!({"id": id, "name": "Hounds"}));
    assert_eq!(get(&app, id).await.json()["name"], "Hounds");

    let removed = delete(&app, &staff, id).await;
    assert_eq!(removed.status.as_u16(), 204, "{}", removed.body);
    assert_eq!(removed.body, "");
    get(&app, id).await.assert_error(404, "not_found");
    assert!(names(&send(app.get("/v1/categories"), None).await).is_empty());
    let again = delete(&app, &staff, id).await;
    let message = again.assert_error(404, "not_found");
    assert!(message.contains(&id.to_string()), "{message}");
    rename(
        &app,
        &staff,
        id,
        "application/json",
        json!({"name": "Cats"}),
    )
    .await
    .assert_error(404, "not_found");
}

async fn a_removed_category_frees_its_name_and_never_gives_back_its_id(app: TestApp) {
    let staff = app.staff_key().await;
    let dogs = created(&app, &staff, "Dogs").await;
    let cats = created(&app, &staff, "Cats").await;
    assert_eq!(delete(&app, &staff, cats).await.status.as_u16(), 204);
    let dogs_too = create(&app, &staff, "dogs").await;
    dogs_too.assert_error(409, "conflict");
    let cats_again = created(&app, &staff, "CATS").await;
    assert!(
        cats_again > cats && cats > dogs,
        "{dogs} {cats} {cats_again}"
    );
    assert_eq!(
        names(&send(app.get("/v1/categories"), None).await),
        ["Dogs", "CATS"]
    );
}

async fn a_name_taken_regardless_of_case_is_409_naming_it(app: TestApp) {
    let staff = app.staff_key().await;
    created(&app, &staff, "Écureuils").await;
    let birds = created(&app, &staff, "Birds").await;
    let message = create(&app, &staff, "ÉCUREUILS")
        .await
        .assert_error(409, "conflict");
    assert!(message.contains("`ÉCUREUILS`"), "{message}");
    let message = rename(
        &app,
        &staff,
        birds,
        "application/merge-patch+json",
        json!({"name": "écureuils"}),
    )
    .await
    .assert_error(409, "conflict");
    assert!(message.contains("`écureuils`"), "{message}");
    // A category may take its own name in another case.
    let recased = rename(
        &app,
        &staff,
        birds,
        "application/json",
        json!({"name": "BIRDS"}),
    )
    .await;
    assert_eq!(recased.json(), json!({"id": birds, "name": "BIRDS"}));
    assert_eq!(
        names(&send(app.get("/v1/categories"), None).await),
        ["Écureuils", "BIRDS"]
    );
}

async fn the_listing_visits_every_category_once_by_signed_cursors(app: TestApp) {
    let staff = app.staff_key().await;
    let all = ["A", "B", "C", "D", "E"];
    for name in all {
        created(&app, &staff, name).await;
    }
    let mut seen = Vec::new();
    let mut next = Some("/v1/categories?limit=2".to_owned());
    let mut pages = 0;
    let mut cursor_seen = None;
    while let Some(path) = next.take() {
        let page = send(app.get(&path), None).await;
        seen.extend(names(&page));
        pages += 1;
        next = page.header("link").map(|link| {
            let target = link
                .strip_prefix("<")
                .and_then(|rest| rest.strip_suffix(">; rel=\"next\""))
                .unwrap_or_else(|| panic!("a next link: {link}"));
            assert!(
                target.starts_with("/v1/categories?limit=2&cursor="),
                "{link}"
            );
            cursor_seen = Some(
                target
                    .rsplit_once("cursor=")
                    .expect("a cursor")
                    .1
                    .to_owned(),
            );
            target.to_owned()
        });
    }
    assert_eq!(seen, all);
    assert_eq!(pages, 3);

    let cursor = cursor_seen.expect("a cursor was issued");
    let mut tampered = cursor.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ASCII");
    send(app.get(&format!("/v1/categories?cursor={tampered}")), None)
        .await
        .assert_error(400, "invalid_parameter");
    // A cursor of the pets' listing is not one of this listing.
    app.create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    app.create_pet(json!({"name": "Tom", "categoryId": 1}))
        .await;
    let pets = send(app.get("/v1/pets?limit=1"), None).await;
    let pets_link = pets.header("link").expect("a next page of pets").to_owned();
    let pets_cursor = pets_link
        .rsplit_once("cursor=")
        .and_then(|(_, rest)| rest.strip_suffix(">; rel=\"next\""))
        .expect("a cursor");
    let message = send(
        app.get(&format!("/v1/categories?cursor={pets_cursor}")),
        None,
    )
    .await
    .assert_error(400, "invalid_parameter");
    assert!(message.contains("`cursor`"), "{message}");
}

async fn a_retried_create_is_replayed_and_a_reused_key_refused(app: TestApp) {
    let staff = app.staff_key().await;
    let keyed = |name: &str| {
        let request = app
            .post_json_as(&staff, "/v1/categories")
            .insert_header(("Idempotency-Key", "create-dogs"));
        send(request, Some(json!({"name": name}).to_string()))
    };
    let first = keyed("Dogs").await;
    assert_eq!(first.status.as_u16(), 201, "{}", first.body);
    let retry = keyed("Dogs").await;
    assert_eq!(retry.status.as_u16(), 201, "{}", retry.body);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.body, first.body);
    assert_eq!(retry.header("location"), first.header("location"));
    keyed("Cats")
        .await
        .assert_error(422, "idempotency_key_reused");
    // Without the key, the same request is a new one: its name is taken.
    create(&app, &staff, "Dogs")
        .await
        .assert_error(409, "conflict");
    assert_eq!(
        names(&send(app.get("/v1/categories"), None).await),
        ["Dogs"]
    );
}

async fn pets_keep_their_category_id_whatever_becomes_of_the_category(app: TestApp) {
    let staff = app.staff_key().await;
    let dogs = created(&app, &staff, "Dogs").await;
    let rex = app
        .create_pet(json!({"name": "Rex", "categoryId": dogs}))
        .await;
    // A `categoryId` that names no category is a number like any other.
    let stray = app
        .create_pet(json!({"name": "Tom", "categoryId": 987_654}))
        .await;
    assert_eq!(stray["categoryId"], 987_654);
    rename(
        &app,
        &staff,
        dogs,
        "application/json",
        json!({"name": "Hounds"}),
    )
    .await;
    assert_eq!(delete(&app, &staff, dogs).await.status.as_u16(), 204);
    let pets = app.list("").await;
    assert_eq!(pets, [rex, stray]);
}

async fn every_operation_refuses_a_missing_key_and_changes_need_a_store_key(app: TestApp) {
    let staff = app.staff_key().await;
    let id = created(&app, &staff, "Dogs").await;
    let one = format!("/v1/categories/{id}");
    let operations = [
        (Method::GET, "/v1/categories", None),
        (Method::GET, one.as_str(), None),
        (
            Method::POST,
            "/v1/categories",
            Some(json!({"name": "Cats"})),
        ),
        (Method::PATCH, one.as_str(), Some(json!({"name": "Cats"}))),
        (Method::DELETE, one.as_str(), None),
    ];
    for (method, path, body) in &operations {
        let request = app.client.request(method.clone(), app.url(path));
        let request = request.insert_header(("Content-Type", "application/json"));
        let response = send(request, body.as_ref().map(Value::to_string)).await;
        response.assert_error(401, "unauthorized");
    }
    let reader = app
        .issue_key(&["--name", "reader", "--scope", "read"])
        .await;
    for key in [reader.as_str(), app.api_key.as_str()] {
        for (method, path, body) in operations.iter().skip(2) {
            let response = call(
                &app,
                method.clone(),
                key,
                path,
                body.clone().map(|body| ("application/json", body)),
            )
            .await;
            let message = response.assert_error(403, "forbidden");
            assert!(message.contains("`store`"), "{method} {path}: {message}");
        }
    }
    // The refusals changed nothing; a `read` key reads.
    let read = send(app.get_as(&reader, &one), None).await;
    assert_eq!(read.json(), json!({"id": id, "name": "Dogs"}));
}

async fn bad_bodies_parameters_and_media_types_are_400_and_415_naming_them(app: TestApp) {
    let staff = app.staff_key().await;
    let id = created(&app, &staff, "Dogs").await;
    for (body, naming) in [
        (json!({}), "`name` is required"),
        (json!({"name": "   "}), "`name` must not be blank"),
        (json!({"name": 3}), "`name` must be a string"),
        (json!({"name": "a".repeat(101)}), "at most 100"),
        (json!({"name": "Cats", "id": 4}), "unknown field `id`"),
        (json!({"name": "Ca\u{202e}ts"}), "U+202E"),
    ] {
        let response = call(
            &app,
            Method::POST,
            &staff,
            "/v1/categories",
            Some(("application/json", body.clone())),
        )
        .await;
        let message = response.assert_error(400, "validation_failed");
        assert!(message.contains(naming), "{body}: {message}");
    }
    let message = rename(
        &app,
        &staff,
        id,
        "application/merge-patch+json",
        json!({"name": null}),
    )
    .await
    .assert_error(400, "validation_failed");
    assert!(message.contains("cannot be removed"), "{message}");
    let not_json = app
        .client
        .post(app.url("/v1/categories"))
        .bearer_auth(&staff)
        .insert_header(("Content-Type", "application/json"));
    send(not_json, Some("{\"name\":".to_owned()))
        .await
        .assert_error(400, "malformed_json");

    // The patch's media type is not createCategory's, and neither takes plain text.
    call(
        &app,
        Method::POST,
        &staff,
        "/v1/categories",
        Some(("application/merge-patch+json", json!({"name": "Cats"}))),
    )
    .await
    .assert_error(415, "unsupported_media_type");
    rename(&app, &staff, id, "text/plain", json!({"name": "Cats"}))
        .await
        .assert_error(415, "unsupported_media_type");

    for path in [
        "/v1/categories/abc",
        "/v1/categories/0",
        "/v1/categories/-3",
    ] {
        let message = send(app.get(path), None)
            .await
            .assert_error(400, "invalid_parameter");
        assert!(message.contains("`categoryId`"), "{path}: {message}");
    }
    for path in [
        "/v1/categories?limit=0",
        "/v1/categories?name=Dogs",
        "/v1/categories/1?fields=name",
    ] {
        send(app.get(path), None)
            .await
            .assert_error(400, "invalid_parameter");
    }
    // Nothing was stored by any refusal.
    assert_eq!(
        names(&send(app.get("/v1/categories"), None).await),
        ["Dogs"]
    );
}

async fn an_id_no_category_has_is_404_for_every_operation(app: TestApp) {
    let staff = app.staff_key().await;
    get(&app, 42).await.assert_error(404, "not_found");
    rename(
        &app,
        &staff,
        42,
        "application/json",
        json!({"name": "Cats"}),
    )
    .await
    .assert_error(404, "not_found");
    let message = delete(&app, &staff, 42)
        .await
        .assert_error(404, "not_found");
    assert_eq!(message, "no category has the id 42");
}
