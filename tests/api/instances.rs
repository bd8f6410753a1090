//! Several `petstore serve` processes on one PostgreSQL database, as in production behind a load
//! balancer, and start-up against a database that is not there.

use std::collections::BTreeSet;
use std::process::Child;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use petstore_test_support::unreachable_postgres_url;
use serde_json::json;

use crate::helpers::{run_petstore, send, Backend, TestApp};

struct Sibling {
    server: Child,
    address: String,
}

impl Drop for Sibling {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

async fn two_instances() -> (TestApp, Sibling) {
    let app = TestApp::spawn(Backend::Postgres).await;
    let (server, address) = app.spawn_sibling();
    (app, Sibling { server, address })
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
        let address = if n % 2 == 0 {
            &app.address
        } else {
            &other.address
        };
        let request = app
            .client
            .post(format!("{address}/v1/pets"))
            .bearer_auth(&app.api_key)
            .insert_header(("Content-Type", "application/json"));
        send(
            request,
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

#[test]
fn start_up_gives_up_on_an_unreachable_database_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = unreachable_postgres_url().replace("postgres://", "postgres://app:hunter2@");
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
