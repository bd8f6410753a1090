//! The order of a graceful stop, as a balancer sees it: on SIGTERM `/readyz` turns 503 at once,
//! the API keeps answering for the drain delay, each answer closing its connection, and only
//! then does the instance stop accepting and exit 0; a client that connected before then is
//! answered, and one that did not is refused.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;

use crate::held_connections::{host, one_request};
use petstore_test_support::stop_under_load::{assert_stored_exactly, stop_repeatedly, Load};
use petstore_test_support::{eventually, send, try_send, Backend, TestApp};

const DRAIN_DELAY: Duration = Duration::from_secs(2);

#[actix_web::test]
async fn sigterm_turns_readyz_503_at_once_then_serves_through_the_drain_delay() {
    let mut app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_DRAIN_DELAY", "2s")
        .in_a_process()
        .spawn()
        .await;
    let host = host(&app).to_owned();
    // A balancer's pooled connection, opened and used before the stop.
    let mut pooled = TcpStream::connect(&host).await.expect("connect");
    assert!(one_request(&mut pooled, &host)
        .await
        .starts_with("HTTP/1.1 200"));
    let readyz = || send(app.client.get(app.url("/readyz")), None);
    assert_eq!(readyz().await.status, 200);

    app.terminate();
    let signalled = Instant::now();
    // The signal is delivered asynchronously: poll for the 503, well within the drain delay.
    let unready = eventually(
        signalled + Duration::from_millis(500),
        "/readyz 503 after SIGTERM",
        async || {
            let response = readyz().await;
            if response.status == 503 {
                Ok(response)
            } else {
                Err(response.status)
            }
        },
    )
    .await;
    unready.assert_error(503, "service_unavailable");

    // Draining: the API still answers, and tells each client to close its connection.
    let created = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Late", "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let answer = one_request(&mut pooled, &host).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "a draining instance kept the connection open: {answer}"
    );
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(2), pooled.read_to_end(&mut rest)).await;
    assert!(
        matches!(closed, Ok(Ok(0))),
        "the connection stayed open after Connection: close"
    );

    // Then it stops accepting, not before the drain delay, and exits 0.
    let refused_after = eventually(
        signalled + DRAIN_DELAY + Duration::from_secs(10),
        "connections refused after the drain",
        async || match try_send(app.client.get(app.url("/healthz")), None).await {
            Ok(response) => {
                assert_eq!(response.status, 200, "{}", response.body);
                Err(response.status)
            }
            Err(_) => Ok(signalled.elapsed()),
        },
    )
    .await;
    assert!(
        refused_after >= DRAIN_DELAY,
        "stopped accepting after {refused_after:?}, before the drain delay"
    );
    let status = app.wait_for_exit();
    assert!(status.success(), "exit status {status}");
    assert!(
        signalled.elapsed() < DRAIN_DELAY + Duration::from_secs(5),
        "exited after {:?}",
        signalled.elapsed()
    );
}

/// Stops under load, for a stop to come just as connections wait in the accept queue.
const STOPS: usize = 3;
/// Clients creating pets, each request on a connection of its own.
const CLIENTS: usize = 32;
/// Long enough for the load to run through it, short enough for three stops in seconds.
const SHORT_DRAIN_DELAY: &str = "300ms";

#[actix_web::test]
async fn every_connection_accepted_before_the_listener_closes_is_answered() {
    let mut app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_DRAIN_DELAY", SHORT_DRAIN_DELAY)
        .in_a_process()
        .spawn()
        .await;
    let load = Load {
        creating: CLIENTS,
        reading: 0,
        pet_id: 0,
    };
    let outcomes = stop_repeatedly(&mut app, load, STOPS).await;
    outcomes.assert_every_request_answered();
    assert_stored_exactly(&app, &outcomes.created()).await;
}
