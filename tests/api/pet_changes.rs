//! Changing and removing pets end to end, on every backend: PATCH by JSON Merge Patch and
//! DELETE, the staff's alone; their ETags, `If-Match` (412 when stale, 428 when required) and
//! `If-None-Match` (304) on getPet; the status rules with orders; and the races a shop meets:
//! twenty edits from one ETag (one wins, on one instance and across two), an order racing a
//! removal or a status change (never both).

use futures_util::future::join_all;
use serde_json::json;

use petstore_test_support::on_backends;
use petstore_test_support::{send, Backend, TestApp, TestResponse};

fn patch(app: &TestApp, key: &str, id: i64) -> awc::ClientRequest {
    app.client
        .patch(app.url(&format!("/v1/pets/{id}")))
        .bearer_auth(key)
        .insert_header(("Content-Type", "application/merge-patch+json"))
}

fn delete(app: &TestApp, key: &str, id: i64) -> awc::ClientRequest {
    app.client
        .delete(app.url(&format!("/v1/pets/{id}")))
        .bearer_auth(key)
}

fn get(app: &TestApp, id: i64) -> awc::ClientRequest {
    app.get(&format!("/v1/pets/{id}"))
}

async fn new_pet(app: &TestApp, name: &str) -> (i64, String) {
    let created = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": name, "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let etag = created.header("etag").expect("an ETag").to_owned();
    (created.json()["id"].as_i64().expect("an id"), etag)
}

async fn place_order(app: &TestApp, pet: i64) -> TestResponse {
    send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet}).to_string()),
    )
    .await
}

async fn a_change_answers_the_pet_and_its_new_etag(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    let changed = send(
        patch(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
        Some(json!({"name": "Rex Junior", "status": "pending"}).to_string()),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(
        changed.json(),
        json!({"id": id, "name": "Rex Junior", "categoryId": 1, "status": "pending"})
    );
    let new_etag = changed.header("etag").expect("an ETag").to_owned();
    assert_ne!(new_etag, etag);

    // getPet: the new tag, a 304 for it, the full pet for the old one.
    let read = send(get(&app, id), None).await;
    assert_eq!(read.header("etag"), Some(new_etag.as_str()));
    let unchanged = send(
        get(&app, id).insert_header(("If-None-Match", new_etag.as_str())),
        None,
    )
    .await;
    assert_eq!(unchanged.status, 304);
    assert!(unchanged.body.is_empty());
    assert_eq!(unchanged.header("etag"), Some(new_etag.as_str()));
    let stale = send(
        get(&app, id).insert_header(("If-None-Match", etag.as_str())),
        None,
    )
    .await;
    assert_eq!(stale.status, 200);

    // A change that changes nothing keeps the tag.
    let same = send(
        patch(&app, &staff, id),
        Some(json!({"name": "Rex Junior"}).to_string()),
    )
    .await;
    assert_eq!(same.status, 200, "{}", same.body);
    assert_eq!(same.header("etag"), Some(new_etag.as_str()));
    // application/json is a merge patch too.
    let as_json = send(
        app.client
            .patch(app.url(&format!("/v1/pets/{id}")))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"categoryId": 4}).to_string()),
    )
    .await;
    assert_eq!(as_json.json()["categoryId"], 4, "{}", as_json.body);
}

async fn a_stale_etag_is_412_and_changes_nothing(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    let first = send(
        patch(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
        Some(json!({"name": "Max"}).to_string()),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = send(
        patch(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
        Some(json!({"name": "Tom"}).to_string()),
    )
    .await;
    second.assert_error(412, "precondition_failed");
    let removal = send(
        delete(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
        None,
    )
    .await;
    removal.assert_error(412, "precondition_failed");
    assert_eq!(send(get(&app, id), None).await.json()["name"], "Max");
    // `*` is any version; a gzipped response's tag (`-gz`) is the same tag for If-Match.
    let current = first.header("etag").expect("an ETag");
    let gz = format!("{}-gz\"", current.trim_end_matches('"'));
    let with_gz = send(
        patch(&app, &staff, id).insert_header(("If-Match", gz.as_str())),
        Some(json!({"name": "Tom"}).to_string()),
    )
    .await;
    assert_eq!(with_gz.status, 200, "{}", with_gz.body);
    let any = send(
        patch(&app, &staff, id).insert_header(("If-Match", "*")),
        Some(json!({"name": "Bob"}).to_string()),
    )
    .await;
    assert_eq!(any.status, 200, "{}", any.body);
    let malformed = send(
        patch(&app, &staff, id).insert_header(("If-Match", "no-quotes")),
        Some(json!({"name": "Rex"}).to_string()),
    )
    .await;
    malformed.assert_error(400, "invalid_parameter");
}

async fn changing_and_removing_are_the_staff_s(app: TestApp) {
    let (id, _) = new_pet(&app, "Rex").await;
    let reader = app
        .issue_key(&["--name", "reader", "--scope", "read"])
        .await;
    for key in [app.api_key.clone(), reader] {
        send(
            patch(&app, &key, id),
            Some(json!({"name": "Max"}).to_string()),
        )
        .await
        .assert_error(403, "forbidden");
        send(delete(&app, &key, id), None)
            .await
            .assert_error(403, "forbidden");
    }
    assert_eq!(send(get(&app, id), None).await.json()["name"], "Rex");
}

async fn bad_patches_are_400_naming_every_field(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, _) = new_pet(&app, "Rex").await;
    let refused = send(
        patch(&app, &staff, id),
        Some(json!({"id": 9, "name": null, "colour": "red", "status": "lost"}).to_string()),
    )
    .await;
    let message = refused.assert_error(400, "validation_failed");
    for named in ["`id`", "`name`", "`colour`", "`status`"] {
        assert!(message.contains(named), "{named}: {message}");
    }
    send(patch(&app, &staff, id), Some("[1]".to_owned()))
        .await
        .assert_error(400, "malformed_json");
    send(
        app.client
            .patch(app.url(&format!("/v1/pets/{id}")))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "text/plain")),
        Some("{}".to_owned()),
    )
    .await
    .assert_error(415, "unsupported_media_type");
    send(patch(&app, &staff, 999_999), Some("{}".to_owned()))
        .await
        .assert_error(404, "not_found");
    let sold_back = send(
        patch(&app, &staff, id),
        Some(json!({"status": "sold"}).to_string()),
    )
    .await;
    sold_back.assert_error(409, "conflict");
}

async fn a_removed_pet_is_gone_and_its_orders_stay(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, _) = new_pet(&app, "Rex").await;
    let order = place_order(&app, id).await;
    assert_eq!(order.status, 201, "{}", order.body);
    let order_id = order.json()["id"].as_i64().expect("an order id");

    // Held by its order: neither its status nor its removal.
    let held = send(delete(&app, &staff, id), None).await;
    let message = held.assert_error(409, "conflict");
    assert!(message.contains(&order_id.to_string()), "{message}");
    let status = send(
        patch(&app, &staff, id),
        Some(json!({"status": "available"}).to_string()),
    )
    .await;
    let message = status.assert_error(409, "conflict");
    assert!(message.contains(&order_id.to_string()), "{message}");

    let cancelled = send(
        app.post_json(&format!("/v1/store/orders/{order_id}/cancel")),
        None,
    )
    .await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    let removed = send(delete(&app, &staff, id), None).await;
    assert_eq!(removed.status, 204, "{}", removed.body);
    assert!(removed.body.is_empty());

    send(get(&app, id), None)
        .await
        .assert_error(404, "not_found");
    assert!(app.list("").await.iter().all(|pet| pet["id"] != id));
    let by_id = send(app.get(&format!("/v1/pets?id={id}")), None).await;
    assert_eq!(by_id.json(), json!([]));
    send(delete(&app, &staff, id), None)
        .await
        .assert_error(404, "not_found");
    place_order(&app, id).await.assert_error(404, "not_found");
    let kept = send(app.get(&format!("/v1/store/orders/{order_id}")), None).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    assert_eq!(kept.json()["petId"], id);
}

async fn an_order_moving_the_pet_changes_its_etag(app: TestApp) {
    let (id, etag) = new_pet(&app, "Rex").await;
    assert_eq!(place_order(&app, id).await.status, 201);
    let after = send(
        get(&app, id).insert_header(("If-None-Match", etag.as_str())),
        None,
    )
    .await;
    assert_eq!(after.status, 200, "no 304 once an order changed the pet");
    assert_eq!(after.json()["status"], "pending");
    assert_ne!(after.header("etag"), Some(etag.as_str()));
}

async fn a_keyed_change_retried_is_replayed_not_412(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    let keyed = || {
        patch(&app, &staff, id)
            .insert_header(("If-Match", etag.as_str()))
            .insert_header(("Idempotency-Key", "rename-1"))
    };
    let body = json!({"name": "Max"}).to_string();
    let first = send(keyed(), Some(body.clone())).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let retry = send(keyed(), Some(body)).await;
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.body, first.body);
    assert_eq!(retry.header("etag"), first.header("etag"));
}

async fn of_twenty_edits_from_one_etag_one_wins(app: TestApp) {
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    let answers = join_all((0..20).map(|n| {
        send(
            patch(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
            Some(json!({"name": format!("Rex {n}")}).to_string()),
        )
    }))
    .await;
    assert_one_won(&answers);
}

fn assert_one_won(answers: &[TestResponse]) {
    let statuses: Vec<u16> = answers
        .iter()
        .map(|answer| answer.status.as_u16())
        .collect();
    assert_eq!(
        statuses.iter().filter(|&&s| s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|&&s| s == 412).count(),
        answers.len() - 1,
        "{statuses:?}"
    );
}

async fn an_order_racing_a_removal_or_a_status_change_never_both(app: TestApp) {
    let staff = app.staff_key().await;
    // At most ten orders in all: a key's bound on open orders.
    for round in 0..5 {
        let (id, _) = new_pet(&app, &format!("Pet {round}")).await;
        let (ordered, removed) =
            tokio::join!(place_order(&app, id), send(delete(&app, &staff, id), None));
        let outcome = (ordered.status.as_u16(), removed.status.as_u16());
        assert!(
            matches!(outcome, (201, 409) | (404, 204)),
            "round {round}: {outcome:?}"
        );

        // Both want the pet `pending`: whichever comes second finds it so (the order is
        // refused, or the patch changes nothing), so the pet moved exactly once.
        let (id, _) = new_pet(&app, &format!("Other {round}")).await;
        let (ordered, moved) = tokio::join!(
            place_order(&app, id),
            send(
                patch(&app, &staff, id),
                Some(json!({"status": "pending"}).to_string())
            )
        );
        let outcome = (ordered.status.as_u16(), moved.status.as_u16());
        assert!(
            matches!(outcome, (201 | 409, 200)),
            "round {round}: {outcome:?}"
        );
        let pet = send(get(&app, id), None).await;
        assert_eq!(pet.json()["status"], "pending");
        assert_eq!(
            pet.header("etag"),
            Some("\"1.2\""),
            "round {round}: moved once"
        );
    }
}

on_backends!(
    [memory, sqlite, postgres]
    a_change_answers_the_pet_and_its_new_etag,
    a_stale_etag_is_412_and_changes_nothing,
    a_removed_pet_is_gone_and_its_orders_stay,
    an_order_moving_the_pet_changes_its_etag,
    a_keyed_change_retried_is_replayed_not_412,
    of_twenty_edits_from_one_etag_one_wins,
    an_order_racing_a_removal_or_a_status_change_never_both,
);

mod refused {
    use super::*;
    on_backends!(
        [memory]
        changing_and_removing_are_the_staff_s,
        bad_patches_are_400_naming_every_field,
    );
}

/// With `PETSTORE_REQUIRE_IF_MATCH=true`, a change without `If-Match` is 428 and changes
/// nothing.
#[actix_web::test]
async fn a_server_requiring_if_match_refuses_a_change_without_it() {
    let app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_REQUIRE_IF_MATCH", "true")
        .spawn()
        .await;
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    send(
        patch(&app, &staff, id),
        Some(json!({"name": "Max"}).to_string()),
    )
    .await
    .assert_error(428, "precondition_required");
    send(delete(&app, &staff, id), None)
        .await
        .assert_error(428, "precondition_required");
    let guarded = send(
        patch(&app, &staff, id).insert_header(("If-Match", etag.as_str())),
        Some(json!({"name": "Max"}).to_string()),
    )
    .await;
    assert_eq!(guarded.status, 200, "{}", guarded.body);
}

/// Two instances on one PostgreSQL database: twenty edits from one ETag, split between them,
/// still give one 200 and nineteen 412s.
#[actix_web::test]
async fn of_twenty_edits_across_two_instances_one_wins() {
    let (app, other) = crate::instances::two_instances().await;
    let staff = app.staff_key().await;
    let (id, etag) = new_pet(&app, "Rex").await;
    let answers = join_all((0..20).map(|n| {
        let address = if n % 2 == 0 {
            &app.address
        } else {
            &other.address
        };
        let request = app
            .client
            .patch(format!("{address}/v1/pets/{id}"))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/merge-patch+json"))
            .insert_header(("If-Match", etag.as_str()));
        send(
            request,
            Some(json!({"name": format!("Rex {n}")}).to_string()),
        )
    }))
    .await;
    assert_one_won(&answers);
    let winner = answers
        .iter()
        .find(|answer| answer.status == 200)
        .expect("one 200");
    let stored = send(get(&app, id), None).await;
    assert_eq!(
        stored.json(),
        winner.json(),
        "the one stored is the one answered 200"
    );
}
