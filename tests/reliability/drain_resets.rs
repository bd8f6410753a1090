//! Graceful stops under heavy load reset no connection: ten stops, each under 96 clients
//! creating and 32 reading pets on a new connection per request, on SQLite and on PostgreSQL.
//! Every request sent on a connection is answered (201 and stored, 200, or 503 with `Connection:
//! close`); a client that had not connected is refused. `tests/api/drain.rs` runs a short form.

use petstore_test_support::stop_under_load::{assert_stored_exactly, stop_repeatedly, Load};
use petstore_test_support::{backend_named, TestApp};

const STOPS: usize = 10;
const CREATING: usize = 96;
const READING: usize = 32;

async fn spawn_draining(backend: &str) -> TestApp {
    TestApp::builder(backend_named(backend))
        .setting("PETSTORE_DRAIN_DELAY", "1s")
        .in_a_process()
        .spawn()
        .await
}

async fn every_request_through_ten_stops_is_answered(mut app: TestApp) {
    let read = app
        .create_pet(serde_json::json!({"name": "Read", "categoryId": 1}))
        .await;
    let pet_id = read["id"].as_i64().expect("an id");
    let load = Load {
        creating: CREATING,
        reading: READING,
        pet_id,
    };
    let outcomes = stop_repeatedly(&mut app, load, STOPS).await;
    outcomes.assert_every_request_answered();
    let mut expected = outcomes.created();
    expected.push(pet_id);
    assert_stored_exactly(&app, &expected).await;
}

petstore_test_support::database::on_backends!(
    #[actix_web::test] super::spawn_draining,
    [sqlite, postgres]
    every_request_through_ten_stops_is_answered
);
