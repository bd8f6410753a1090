//! `Idempotency-Key` end to end, on every backend: a retry gets the first response again, byte
//! for byte and marked `Idempotent-Replayed`, without a second write; the same key with another
//! request is 422; one key at once is one write; keys belong to their API key; responses expire;
//! a refusal of the request itself is replayed too, one that depends on what is stored (404,
//! 409) is not; orders' POSTs alike; across two instances; and after `kill -9`
//! under 64 clients retrying, every key's retry replays what was stored and nothing exists
//! twice.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{eventually, send, try_send, Backend, TestApp, TestResponse};

fn keyed(app: &TestApp, path: &str, key: &str) -> awc::ClientRequest {
    app.post_json(path).insert_header(("Idempotency-Key", key))
}

async fn create(app: &TestApp, key: &str, body: &Value) -> TestResponse {
    send(keyed(app, "/v1/pets", key), Some(body.to_string())).await
}

fn replayed(response: &TestResponse) -> bool {
    response.header("idempotent-replayed") == Some("true")
}

async fn a_retry_gets_the_first_response_and_writes_nothing(app: TestApp) {
    let body = json!({"name": "Rex", "categoryId": 3});
    let first = create(&app, "\"create-rex-1\"", &body).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert!(!replayed(&first));
    // The bare form is the same key as the quoted one.
    let retry = create(&app, "create-rex-1", &body).await;
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(replayed(&retry), "{:?}", retry.headers);
    assert_eq!(retry.body, first.body, "byte for byte");
    assert_eq!(retry.header("location"), first.header("location"));
    assert_eq!(retry.header("content-type"), Some("application/json"));
    assert_ne!(
        retry.header("x-request-id"),
        first.header("x-request-id"),
        "the replay is a response of its own"
    );
    assert_eq!(app.list("").await.len(), 1, "the retry wrote nothing");

    let other_body = create(
        &app,
        "create-rex-1",
        &json!({"name": "Tom", "categoryId": 3}),
    )
    .await;
    other_body.assert_error(422, "idempotency_key_reused");
    let other_path = send(
        keyed(&app, "/v1/store/orders", "create-rex-1"),
        Some(body.to_string()),
    )
    .await;
    other_path.assert_error(422, "idempotency_key_reused");
    assert_eq!(app.list("").await.len(), 1);
}

async fn a_bad_key_is_400_and_stores_nothing(app: TestApp) {
    let body = json!({"name": "Rex", "categoryId": 3}).to_string();
    // A comma outside quotes separates values, in every spelling, as two headers do.
    for key in [
        "",
        "two words",
        "\"unclosed",
        &"k".repeat(256),
        "a,b",
        "a, b",
        r#""a", "b""#,
    ] {
        let response = send(keyed(&app, "/v1/pets", key), Some(body.clone())).await;
        let message = response.assert_error(400, "invalid_parameter");
        assert!(message.contains("Idempotency-Key"), "{message}");
    }
    let twice = app
        .post_json("/v1/pets")
        .append_header(("Idempotency-Key", "a"))
        .append_header(("Idempotency-Key", "b"));
    send(twice, Some(body))
        .await
        .assert_error(400, "invalid_parameter");
    assert!(app.list("").await.is_empty());
}

async fn a_refusal_is_replayed(app: TestApp) {
    let bad = json!({"name": "", "categoryId": 3});
    let first = create(&app, "bad-1", &bad).await;
    first.assert_error(400, "validation_failed");
    let retry = create(&app, "bad-1", &bad).await;
    retry.assert_error(400, "validation_failed");
    assert!(replayed(&retry));
    assert_eq!(retry.body, first.body);
}

async fn one_key_sent_at_once_is_one_write(app: TestApp) {
    let body = json!({"name": "Once", "categoryId": 1});
    let responses = join_all((0..20).map(|_| create(&app, "at-once", &body))).await;
    let mut first = None;
    for response in &responses {
        match response.status.as_u16() {
            201 if !replayed(response) => {
                assert!(first.is_none(), "two first responses");
                first = Some(response.body.clone());
            }
            201 => {}
            409 => {
                response.assert_error(409, "conflict");
                assert_eq!(response.header("retry-after"), Some("1"));
            }
            other => panic!("{other}: {}", response.body),
        }
    }
    let first = first.expect("one request was carried out");
    for response in responses.iter().filter(|response| replayed(response)) {
        assert_eq!(response.body, first);
    }
    assert_eq!(app.list("").await.len(), 1, "exactly one write");
}

async fn keys_belong_to_their_api_key(app: TestApp) {
    let other_key = app.issue_key(&["--name", "other client"]).await;
    let body = json!({"name": "Rex", "categoryId": 3});
    let mine = create(&app, "shared-value", &body).await;
    assert_eq!(mine.status, 201);
    let theirs = send(
        app.client
            .post(app.url("/v1/pets"))
            .bearer_auth(&other_key)
            .insert_header(("Content-Type", "application/json"))
            .insert_header(("Idempotency-Key", "shared-value")),
        Some(body.to_string()),
    )
    .await;
    assert_eq!(theirs.status, 201, "{}", theirs.body);
    assert!(!replayed(&theirs), "another API key's key is another key");
    assert_ne!(theirs.body, mine.body);
    assert_eq!(app.list("").await.len(), 2);
}

async fn order_actions_are_replayed_not_repeated(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let body = json!({"petId": pet["id"]}).to_string();
    let placed = send(
        keyed(&app, "/v1/store/orders", "place-1"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let again = send(keyed(&app, "/v1/store/orders", "place-1"), Some(body)).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert!(replayed(&again));
    assert_eq!(again.body, placed.body);
    assert_eq!(again.header("location"), placed.header("location"));

    let id = placed.json()["id"].as_i64().expect("an id");
    // Approving and delivering are the staff's.
    let staff = app.staff_key().await;
    let staff_keyed = |path: &str, key: &str| {
        app.post_json_as(&staff, path)
            .insert_header(("Idempotency-Key", key.to_owned()))
    };
    for action in ["approve", "deliver"] {
        let path = format!("/v1/store/orders/{id}/{action}");
        let done = send(staff_keyed(&path, &format!("{action}-1")), None).await;
        assert_eq!(done.status, 200, "{}", done.body);
        // Without the key, doing it twice is refused; with it, the retry is answered as before.
        let retry = send(staff_keyed(&path, &format!("{action}-1")), None).await;
        assert_eq!(retry.status, 200, "{}", retry.body);
        assert!(replayed(&retry));
        assert_eq!(retry.body, done.body);
    }
    let cancel = format!("/v1/store/orders/{id}/cancel");
    let refused = send(keyed(&app, &cancel, "cancel-1"), None).await;
    refused.assert_error(409, "conflict");
    let orders = send(app.get("/v1/store/orders"), None).await;
    assert_eq!(orders.json().as_array().map(Vec::len), Some(1));
}

/// A refusal that depends on what is stored is not kept: the retry with the same key is
/// carried out again and sees what changed meanwhile.
async fn a_conflict_is_not_kept_and_its_retry_sees_what_changed(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let body = json!({"petId": pet["id"]}).to_string();
    let first = send(app.post_json("/v1/store/orders"), Some(body.clone())).await;
    assert_eq!(first.status, 201, "{}", first.body);
    // The pet is taken: a second order for it is a conflict, and is not kept for its key.
    let refused = send(
        keyed(&app, "/v1/store/orders", "second"),
        Some(body.clone()),
    )
    .await;
    refused.assert_error(409, "conflict");
    let again = send(
        keyed(&app, "/v1/store/orders", "second"),
        Some(body.clone()),
    )
    .await;
    again.assert_error(409, "conflict");
    assert!(
        !replayed(&again),
        "a conflict is checked again, not replayed"
    );
    // Once the first order is cancelled, the same retry is carried out.
    let id = first.json()["id"].as_i64().expect("an order id");
    let cancelled = send(
        app.post_json(&format!("/v1/store/orders/{id}/cancel")),
        None,
    )
    .await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    let placed = send(keyed(&app, "/v1/store/orders", "second"), Some(body)).await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    assert!(!replayed(&placed));
}

/// A not-found is not kept either: nothing is stored for its key.
async fn a_not_found_is_not_kept(app: TestApp) {
    let body = json!({"petId": 999_999}).to_string();
    for _ in 0..2 {
        let missing = send(
            keyed(&app, "/v1/store/orders", "missing"),
            Some(body.clone()),
        )
        .await;
        missing.assert_error(404, "not_found");
        assert!(!replayed(&missing));
    }
}

/// A quoted key whose contents begin with a quote (`"\"q1"` is the key `"q1`) is read back from
/// storage as the key it is, not parsed again as a header value.
async fn a_key_beginning_with_a_quote_is_replayed(app: TestApp) {
    let body = json!({"name": "Rex", "categoryId": 3});
    let first = create(&app, r#""\"q1""#, &body).await;
    assert_eq!(first.status, 201, "{}", first.body);
    for _ in 0..2 {
        let retry = create(&app, r#""\"q1""#, &body).await;
        assert_eq!(retry.status, 201, "{}", retry.body);
        assert!(replayed(&retry), "{:?}", retry.headers);
        assert_eq!(retry.body, first.body, "byte for byte");
    }
    assert_eq!(app.list("").await.len(), 1, "the retries wrote nothing");
}

on_backends!(
    [memory, sqlite, postgres]
    a_key_beginning_with_a_quote_is_replayed,
    a_retry_gets_the_first_response_and_writes_nothing,
    a_refusal_is_replayed,
    one_key_sent_at_once_is_one_write,
    keys_belong_to_their_api_key,
    order_actions_are_replayed_not_repeated,
    a_conflict_is_not_kept_and_its_retry_sees_what_changed,
    a_not_found_is_not_kept,
);

mod refused_keys {
    use super::*;
    on_backends!([memory] a_bad_key_is_400_and_stores_nothing);
}

/// A key is replayed for at least its retention (and less than a second more: times are whole
/// seconds), then the same key is a new request.
#[actix_web::test]
async fn a_response_expires_after_the_retention() {
    let app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_IDEMPOTENCY_TTL", "1s")
        .spawn()
        .await;
    let body = json!({"name": "Rex", "categoryId": 3});
    let first = create(&app, "short-lived", &body).await;
    let stored_at = Instant::now();
    assert_eq!(first.status, 201);
    // Replayed until the retention has passed, then carried out again.
    let executed_again = eventually(
        stored_at + Duration::from_secs(10),
        "the retry carried out again once the retention has passed",
        async || {
            let retry = create(&app, "short-lived", &body).await;
            assert_eq!(retry.status, 201, "{}", retry.body);
            if replayed(&retry) {
                Err("replayed")
            } else {
                Ok(stored_at.elapsed())
            }
        },
    )
    .await;
    assert!(
        executed_again >= Duration::from_secs(1),
        "replayed for only {executed_again:?}, less than the retention"
    );
    assert_eq!(app.list("").await.len(), 2);
}

/// A request still being carried out: its key's retry is 409 with `Retry-After`, and then,
/// once it is answered, the retry replays it. PostgreSQL, where a trigger holds the insert.
#[actix_web::test]
async fn a_retry_while_the_first_is_in_flight_is_409() {
    let app = TestApp::spawn(Backend::Postgres).await;
    app.postgres().slow_down_inserts("1");
    let body = json!({"name": "Slow", "categoryId": 1});
    let first = create(&app, "slow-1", &body);
    let retry_meanwhile = async {
        eventually(
            Duration::from_secs(10),
            "the create's insert running in the database",
            async || match app
                .postgres()
                .sessions_running("with inserted as (insert into pets")
                .0
            {
                0 => Err("no insert running"),
                _ => Ok(()),
            },
        )
        .await;
        create(&app, "slow-1", &body).await
    };
    let (first, meanwhile) = futures_util::future::join(first, retry_meanwhile).await;
    assert_eq!(first.status, 201, "{}", first.body);
    meanwhile.assert_error(409, "conflict");
    assert_eq!(meanwhile.header("retry-after"), Some("1"));
    let after = create(&app, "slow-1", &body).await;
    assert!(replayed(&after));
    assert_eq!(after.body, first.body);
}

/// A failure of ours (503: the insert outlived the statement timeout) is not kept: the retry is
/// carried out once the database is fast again, and stores the pet once.
#[actix_web::test]
async fn a_failure_of_ours_is_not_kept_and_its_retry_is_carried_out() {
    let app = TestApp::builder(Backend::Postgres)
        .setting("PETSTORE_STATEMENT_TIMEOUT", "1s")
        .spawn()
        .await;
    app.postgres().slow_down_inserts("3");
    let body = json!({"name": "Rex", "categoryId": 1});
    create(&app, "unlucky-1", &body)
        .await
        .assert_error(503, "service_unavailable");
    app.postgres().restore_inserts();
    let retry = create(&app, "unlucky-1", &body).await;
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(!replayed(&retry), "a 503 was kept and replayed");
    let again = create(&app, "unlucky-1", &body).await;
    assert!(replayed(&again));
    assert_eq!(app.list("").await.len(), 1);
}

/// One instance writes, the other replays: the record is in the shared database.
#[actix_web::test]
async fn a_retry_through_another_instance_is_replayed() {
    let (app, other) = crate::instances::two_instances().await;
    let body = json!({"name": "Rex", "categoryId": 3});
    let first = create(&app, "across-1", &body).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let retry = send(
        app.client
            .post(format!("{}/v1/pets", other.address))
            .bearer_auth(&app.api_key)
            .insert_header(("Content-Type", "application/json"))
            .insert_header(("Idempotency-Key", "across-1")),
        Some(body.to_string()),
    )
    .await;
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(replayed(&retry));
    assert_eq!(retry.body, first.body);
    assert_eq!(app.list("").await.len(), 1);
}

/// 64 clients create pets, each with a key of its own per pet, and retry every create that got
/// no answer; the server is killed (`kill -9`) in the middle. After the restart every client
/// retries its unanswered key and every answered one: each retry is 201 with the pet it names,
/// no pet exists twice, and every answered pet is there.
async fn retries_after_kill_9_replay_and_nothing_exists_twice(mut app: TestApp) {
    const CLIENTS: usize = 64;
    let answered = RefCell::new(BTreeMap::<String, Value>::new());
    let unanswered = RefCell::new(Vec::<(String, Value)>::new());
    let client = |c: usize| {
        let (app, answered, unanswered) = (&app, &answered, &unanswered);
        async move {
            for n in 0.. {
                let key = format!("c{c}-n{n}");
                let body = json!({"name": key, "categoryId": 1 + c % 9});
                let request = keyed(app, "/v1/pets", &key);
                match try_send(request, Some(body.to_string())).await {
                    Ok(response) => {
                        assert_eq!(response.status, 201, "{}", response.body);
                        answered.borrow_mut().insert(key, response.json());
                    }
                    Err(_) => {
                        unanswered.borrow_mut().push((key, body));
                        return;
                    }
                }
            }
        }
    };
    let killer = async {
        eventually(
            Duration::from_secs(20),
            "500 keyed creates answered",
            async || match answered.borrow().len() {
                enough if enough >= 500 => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
        app.kill_9();
    };
    futures_util::future::join(killer, join_all((0..CLIENTS).map(client))).await;
    let answered = answered.into_inner();

    app.restart();
    let retries = unanswered
        .into_inner()
        .into_iter()
        .map(|(key, body)| (key, body, None))
        .chain(answered.iter().map(|(key, pet)| {
            (
                key.clone(),
                json!({"name": key, "categoryId": pet["categoryId"]}),
                Some(pet),
            )
        }))
        .collect::<Vec<_>>();
    for chunk in retries.chunks(64) {
        let responses = join_all(chunk.iter().map(|(key, body, _)| create(&app, key, body))).await;
        for ((key, _, first), response) in chunk.iter().zip(responses) {
            assert_eq!(response.status, 201, "{key}: {}", response.body);
            let pet = response.json();
            assert_eq!(pet["name"], key.as_str());
            if let Some(first) = first {
                assert!(replayed(&response), "{key} was stored but not replayed");
                assert_eq!(&&pet, first, "{key}");
            }
        }
    }
    let stored = app.list_following_next_links("/v1/pets?limit=100").await;
    let mut names: Vec<&str> = stored
        .iter()
        .map(|pet| pet["name"].as_str().expect("a name"))
        .collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a pet exists twice");
    assert_eq!(count, retries.len(), "every key's pet exists once");
}

mod crash {
    use super::*;
    on_backends!(process [sqlite, postgres] retries_after_kill_9_replay_and_nothing_exists_twice);
}
