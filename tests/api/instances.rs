//! Several `petstore serve` processes on one PostgreSQL database, as in production behind a load
//! balancer, and start-up against a database that is not there.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::process::Child;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use petstore_test_support::unreachable_postgres_url;
use serde_json::json;
use tempfile::TempDir;

use petstore_test_support::{
    claims_of, poll_list_status, run_petstore, send, start_server, Backend, NextLinks, TestApp,
};

/// The key secret both instances are configured with, as in production: keys and cursors issued
/// by one are accepted by the other because of it, not because they share a data directory.
const SHARED_SECRET: &str = "instances-test-secret-of-at-least-32-bytes";

pub(crate) struct Sibling {
    server: Child,
    pub(crate) address: String,
    _data_dir: TempDir,
}

impl Drop for Sibling {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Two instances on one PostgreSQL database, each with its own data directory, sharing only the
/// database and the configured key secret.
pub(crate) async fn two_instances() -> (TestApp, Sibling) {
    two_instances_with(&[]).await
}

/// [`two_instances`], both also configured with `settings`.
pub(crate) async fn two_instances_with(settings: &[(&str, &str)]) -> (TestApp, Sibling) {
    let mut env = vec![("PETSTORE_KEY_SECRET", SHARED_SECRET)];
    env.extend_from_slice(settings);
    let mut builder = TestApp::builder(Backend::Postgres).in_a_process();
    for (name, value) in &env {
        builder = builder.setting(name, value);
    }
    let app = builder.spawn().await;
    let other = sibling_with(&app, &env);
    (app, other)
}

/// A JSON POST of `path` with the shared key, to `app` for even `n` and to `other` for odd.
fn post_json_to_either(app: &TestApp, other: &Sibling, n: usize, path: &str) -> awc::ClientRequest {
    post_json_with_key_to_either(app, other, n, path, &app.api_key)
}

/// [`post_json_to_either`] with `key`.
fn post_json_with_key_to_either(
    app: &TestApp,
    other: &Sibling,
    n: usize,
    path: &str,
    key: &str,
) -> awc::ClientRequest {
    let address = if n % 2 == 0 {
        &app.address
    } else {
        &other.address
    };
    app.client
        .post(format!("{address}{path}"))
        .bearer_auth(key)
        .insert_header(("Content-Type", "application/json"))
}

#[actix_web::test]
async fn a_pet_created_through_one_instance_is_read_through_the_other() {
    let (app, other) = two_instances().await;
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 2}))
        .await;

    let request = app
        .client
        .get(format!("{}/v1/pets/{}", other.address, pet["id"]))
        .bearer_auth(&app.api_key);
    let response = send(request, None).await;

    assert_eq!(
        response.status.as_u16(),
        200,
        "the key issued once works on both: {}",
        response.body
    );
    assert_eq!(response.json(), pet);
}

#[actix_web::test]
async fn concurrent_creates_split_across_two_instances_get_distinct_ids() {
    let (app, other) = two_instances().await;
    let requests = (0..200).map(|n| {
        send(
            post_json_to_either(&app, &other, n, "/v1/pets"),
            Some(json!({"name": format!("pet {n}"), "categoryId": 1}).to_string()),
        )
    });

    let mut ids = BTreeSet::new();
    for response in join_all(requests).await {
        assert_eq!(response.status.as_u16(), 201, "{}", response.body);
        ids.insert(response.json()["id"].as_i64().expect("id"));
    }

    assert_eq!(ids.len(), 200, "two instances handed out the same id");
    let listed: BTreeSet<i64> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .iter()
        .map(|pet| pet["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(listed, ids);
}

/// Ids are handed out at insert but become visible at commit; if two inserts could commit in the
/// opposite order of their ids, a client paging by "ids after the last one seen" would step over
/// the one that committed late. A trigger makes each insert take a random 0-20 ms between taking
/// its id and committing (as a slow disk or a busy server would), eight writers on two instances
/// race a reader that pages from the start again and again, and every pet whose 201 had arrived
/// before the reader asked for its last page must be on one of the pages.
#[actix_web::test]
async fn paging_while_two_instances_create_never_skips_a_committed_pet() {
    let (app, other) = two_instances().await;
    app.postgres().slow_down_inserts("random() * 0.02");
    let created = RefCell::new(Vec::<(i64, Instant)>::new());
    let writers_done = RefCell::new(false);

    let writers = (0..8).map(|writer| {
        let address = if writer % 2 == 0 {
            &app.address
        } else {
            &other.address
        };
        let created = &created;
        let app = &app;
        async move {
            for n in 0..40 {
                let request = app
                    .client
                    .post(format!("{address}/v1/pets"))
                    .bearer_auth(&app.api_key)
                    .insert_header(("Content-Type", "application/json"));
                let body = json!({"name": format!("pet {writer}-{n}"), "categoryId": 1});
                let response = send(request, Some(body.to_string())).await;
                assert_eq!(response.status.as_u16(), 201, "{}", response.body);
                let id = response.json()["id"].as_i64().expect("id");
                created.borrow_mut().push((id, Instant::now()));
            }
        }
    });
    let writers = async {
        join_all(writers).await;
        *writers_done.borrow_mut() = true;
    };

    let reader = async {
        let mut passes = 0;
        let mut partial_passes = 0;
        loop {
            let last_pass = *writers_done.borrow();
            let (seen, last_page_sent) = page_through(&app, "/v1/pets?limit=3").await;
            let missed: Vec<i64> = created
                .borrow()
                .iter()
                .filter(|(id, acknowledged)| *acknowledged < last_page_sent && !seen.contains(id))
                .map(|(id, _)| *id)
                .collect();
            assert!(
                missed.is_empty(),
                "pass {passes} skipped committed pets {missed:?}"
            );
            passes += 1;
            partial_passes += usize::from(seen.len() < 320);
            if last_pass {
                return partial_passes;
            }
        }
    };

    let ((), partial_passes) = futures_util::future::join(writers, reader).await;
    assert!(
        partial_passes >= 1,
        "every pass saw all pets: the reader never paged while pets were being created"
    );
    assert_eq!(created.borrow().len(), 320);
}

/// The ids on every page reached from `first`, and when the request for the last page was sent.
async fn page_through(app: &TestApp, first: &str) -> (BTreeSet<i64>, Instant) {
    let mut seen = BTreeSet::new();
    let mut pages = NextLinks::from(first);
    let mut last_sent = Instant::now();
    while let Some(page) = pages.next_page(app).await {
        seen.extend(page.pets.iter().map(|pet| pet["id"].as_i64().expect("id")));
        last_sent = page.sent;
    }
    (seen, last_sent)
}

#[test]
fn start_up_gives_up_on_an_unreachable_database_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url =
        unreachable_postgres_url().replacen("postgres://petstore@", "postgres://app:hunter2@", 1);
    let env = [
        ("DATABASE_URL".to_owned(), url),
        ("PETSTORE_STARTUP_TIMEOUT".to_owned(), "3s".to_owned()),
        ("PETSTORE_CONNECT_TIMEOUT".to_owned(), "1s".to_owned()),
    ];
    let started = Instant::now();

    let output = run_petstore(dir.path(), &env, &["serve", "--bind", "127.0.0.1:0"]);

    let elapsed = started.elapsed();
    assert!(!output.status.success(), "served without a database");
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(15),
        "retried for {elapsed:?}, expected about the 3s start-up timeout"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot connect to the database"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "the password leaked: {stderr}");
}

/// A `serve` process of its own on `app`'s database, with `env`.
fn sibling_with(app: &TestApp, env: &[(&str, &str)]) -> Sibling {
    let data_dir = tempfile::tempdir().expect("temporary data directory");
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let (server, address) = start_server(data_dir.path(), &app.database_url, &env);
    Sibling {
        server,
        address,
        _data_dir: data_dir,
    }
}

/// The status of `GET /v1/pets` on `address` with `key`, polled until it is `expected` or
/// `within` has passed; returns the last status and how long it took.
async fn poll_status(address: &str, key: &str, expected: u16, within: Duration) -> (u16, Duration) {
    poll_list_status(address, key, within, |status| status == expected).await
}

fn jti(key: &str) -> String {
    claims_of(key)["jti"].as_str().expect("jti").to_owned()
}

#[actix_web::test]
async fn a_key_revoked_through_the_registry_is_refused_by_every_instance_within_a_second() {
    let (app, other) = two_instances().await;
    let key = app.issue_key(&["--name", "leaked"]).await;
    let (status, _) = poll_status(&other.address, &key, 200, Duration::ZERO).await;
    assert_eq!(status, 200, "the other instance accepts a new key at once");

    let output = app.run_keys_command(&["revoke", &jti(&key)]);
    assert!(output.status.success(), "{output:?}");
    let (on_other, took) = poll_status(&other.address, &key, 401, Duration::from_secs(1)).await;
    assert_eq!(
        on_other, 401,
        "the other instance still accepted it after {took:?}"
    );
    let (on_first, took) = poll_status(&app.address, &key, 401, Duration::from_secs(1)).await;
    assert_eq!(
        on_first, 401,
        "the first instance still accepted it after {took:?}"
    );
    let (status, _) = poll_status(&other.address, &app.api_key, 200, Duration::ZERO).await;
    assert_eq!(status, 200, "other keys are untouched");
}

/// Rolling the secret: instances configured with the new secret and the old one as previous
/// accept keys signed with either; an instance without the old one refuses the old keys.
#[actix_web::test]
async fn keys_signed_with_a_previous_secret_work_until_it_is_retired() {
    const NEW_SECRET: &str = "the-rotated-in-secret-of-at-least-32-bytes-long";
    let (app, _) = two_instances().await;
    let old_key = app.api_key.clone();
    let rolled = sibling_with(
        &app,
        &[
            ("PETSTORE_KEY_SECRET", NEW_SECRET),
            ("PETSTORE_KEY_SECRET_PREVIOUS", SHARED_SECRET),
        ],
    );
    let (status, _) = poll_status(&rolled.address, &old_key, 200, Duration::ZERO).await;
    assert_eq!(status, 200, "a key of the previous secret still works");

    let env = [
        ("PETSTORE_KEY_SECRET".to_owned(), NEW_SECRET.to_owned()),
        ("DATABASE_URL".to_owned(), app.database_url.clone()),
    ];
    let new_key =
        petstore_test_support::issue_key(app.data_dir.path(), &env, &["--name", "reissued"]);
    let (status, _) = poll_status(&rolled.address, &new_key, 200, Duration::ZERO).await;
    assert_eq!(status, 200, "a key of the new secret works at once");

    let retired = sibling_with(&app, &[("PETSTORE_KEY_SECRET", NEW_SECRET)]);
    let (status, _) = poll_status(&retired.address, &old_key, 401, Duration::ZERO).await;
    assert_eq!(
        status, 401,
        "once the old secret is retired, its keys stop working"
    );
    let (status, _) = poll_status(&retired.address, &new_key, 200, Duration::ZERO).await;
    assert_eq!(status, 200);
}

/// Fifty concurrent orders for one pet, split across two instances on one database: exactly one
/// is placed, forty-nine are conflicts, and the pet is `pending`.
#[actix_web::test]
async fn fifty_orders_for_one_pet_across_two_instances_place_exactly_one() {
    let (app, other) = two_instances().await;
    let pet = app
        .create_pet(json!({"name": "Popular", "categoryId": 1}))
        .await;
    let pet_id = pet["id"].as_i64().expect("an id");
    let orders = (0..50).map(|n| {
        send(
            post_json_to_either(&app, &other, n, "/v1/store/orders"),
            Some(json!({"petId": pet_id}).to_string()),
        )
    });
    let answers = join_all(orders).await;
    let statuses: Vec<u16> = answers
        .iter()
        .map(|answer| answer.status.as_u16())
        .collect();
    let placed = statuses.iter().filter(|status| **status == 201).count();
    let conflicts = statuses.iter().filter(|status| **status == 409).count();
    assert_eq!((placed, conflicts), (1, 49), "{statuses:?}");
    let pets = app.list(&format!("?id={pet_id}")).await;
    assert_eq!(pets[0]["status"], "pending");
}

/// Orders' owners and the bound on open orders live in the database, so two instances agree on
/// them: an order placed through one is its key's through the other, the staff approve it
/// through either, and a key's open orders are counted across both, at once too.
#[actix_web::test]
async fn orders_owners_and_the_open_order_bound_hold_across_two_instances() {
    let (app, other) = two_instances_with(&[("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "1")]).await;
    let alice = app.api_key.clone();
    let bob = app.issue_key(&["--name", "bob"]).await;
    let staff = app.staff_key().await;
    let mut pets = Vec::new();
    for n in 0..13 {
        let pet = app
            .create_pet(json!({"name": format!("P{n}"), "categoryId": 1}))
            .await;
        pets.push(pet["id"].as_i64().expect("an id"));
    }
    let place = |n: usize, key: &str, pet: i64| {
        send(
            post_json_with_key_to_either(&app, &other, n, "/v1/store/orders", key),
            Some(json!({"petId": pet}).to_string()),
        )
    };
    let on_other = |key: &str, path: &str| {
        send(
            app.client
                .get(format!("{}{path}", other.address))
                .bearer_auth(key),
            None,
        )
    };

    let placed = place(0, &alice, pets[0]).await;
    assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
    let order = placed.json()["id"].as_i64().expect("an id");
    place(1, &alice, pets[1])
        .await
        .assert_error(409, "too_many_open_orders");

    let path = format!("/v1/store/orders/{order}");
    assert_eq!(on_other(&alice, &path).await.json(), placed.json());
    on_other(&bob, &path).await.assert_error(404, "not_found");
    let listed = on_other(&bob, "/v1/store/orders").await;
    assert_eq!(listed.json(), json!([]));
    let listed = on_other(&staff, "/v1/store/orders").await;
    assert_eq!(listed.json(), json!([placed.json()]));
    let approve = send(
        post_json_with_key_to_either(&app, &other, 1, &format!("{path}/approve"), &staff),
        None,
    )
    .await;
    assert_eq!(approve.status.as_u16(), 200, "{}", approve.body);
    let again = place(1, &alice, pets[1]).await;
    assert_eq!(again.status.as_u16(), 201, "{}", again.body);

    // Bob, with no open order, orders eleven pets at once through both instances: one order.
    let answers = join_all((0..11).map(|n| place(n, &bob, pets[2 + n]))).await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    let placed = statuses.iter().filter(|status| **status == 201).count();
    let refused = answers
        .iter()
        .filter(|a| a.status.as_u16() == 409 && a.body.contains("too_many_open_orders"))
        .count();
    assert_eq!((placed, refused), (1, 10), "{statuses:?}");
}
