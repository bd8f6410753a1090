//! A database outage under a running server: PostgreSQL is stopped, every API request answers
//! 503 quickly, and when PostgreSQL is back the same process serves again. A test binary of its
//! own, because stopping the shared test cluster would fail any other test running meanwhile.

mod failover;
mod postgres_under_load;
mod read_only;
mod small_filesystem;
mod small_volume;
mod storage_faults;

use std::time::{Duration, Instant};

use petstore_test_support::ClusterControl;
use petstore_test_support::{eventually, send, Backend, TestApp, TestResponse};
use serde_json::json;

/// The bound a client waits at most while the database is down, with the timeouts set below.
const BOUND: Duration = Duration::from_secs(4);

async fn timed(request: awc::ClientRequest, body: Option<String>) -> TestResponse {
    let started = Instant::now();
    let response = send(request, body).await;
    assert!(
        started.elapsed() < BOUND,
        "answered after {:?}",
        started.elapsed()
    );
    response
}

#[actix_web::test]
async fn requests_get_503_while_postgres_is_down_and_succeed_once_it_is_back() {
    let cluster = ClusterControl::acquire();
    let app = TestApp::builder(Backend::Postgres)
        .setting("PETSTORE_POOL_TIMEOUT", "1s")
        .setting("PETSTORE_CONNECT_TIMEOUT", "1s")
        .in_a_process()
        .spawn()
        .await;
    let rex = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;

    let stopped = cluster.stop();
    let body = json!({"name": "Tom", "categoryId": 1}).to_string();
    let during = [
        timed(app.get("/v1/pets"), None).await,
        timed(app.post_json("/v1/pets"), Some(body)).await,
        timed(app.get(&format!("/v1/pets/{}", rex["id"])), None).await,
        timed(app.client.get(app.url("/readyz")), None).await,
    ];
    for response in &during {
        response.assert_error(503, "service_unavailable");
        assert_eq!(response.header("retry-after"), Some("1"));
        assert!(
            !response.body.contains("postgres"),
            "internals leaked: {}",
            response.body
        );
    }
    let alive = timed(app.client.get(app.url("/healthz")), None).await;
    assert_eq!(alive.status.as_u16(), 200, "the process itself is still up");
    stopped.start();

    let listed = eventually(
        Duration::from_secs(15),
        "pets listed again once PostgreSQL is back",
        async || {
            let response = send(app.get("/v1/pets"), None).await;
            if response.status.as_u16() == 200 {
                Ok(response)
            } else {
                Err(response.body)
            }
        },
    )
    .await;
    assert_eq!(
        listed.json(),
        json!([rex]),
        "the refused create stored nothing"
    );
    app.create_pet(json!({"name": "Polly", "categoryId": 1}))
        .await;
    let ready = send(app.client.get(app.url("/readyz")), None).await;
    assert_eq!(ready.status.as_u16(), 200, "{}", ready.body);
}
