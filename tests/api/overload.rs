//! A PostgreSQL database slower than the service's limits: requests answer 503
//! `service_unavailable` with `Retry-After` within the configured time, never hang or 500, and a
//! write that timed out stores nothing. A trigger stands in for the slow database.

use std::time::{Duration, Instant};

use serde_json::json;

use petstore_test_support::{eventually, send, Backend, TestApp};

#[actix_web::test]
async fn a_request_finding_every_connection_busy_gets_503_after_the_pool_timeout() {
    let app = TestApp::builder(Backend::Postgres)
        .setting("PETSTORE_POOL_SIZE", "1")
        .setting("PETSTORE_POOL_TIMEOUT", "500ms")
        .spawn()
        .await;
    app.postgres().slow_down_inserts("3");

    let slow_create = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
    );
    let list_meanwhile = async {
        // Once the create's insert is running, it holds the only connection (for 3 s).
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
        let started = Instant::now();
        let response = send(app.get("/v1/pets"), None).await;
        (response, started.elapsed())
    };
    let (created, (listed, waited)) = futures_util::future::join(slow_create, list_meanwhile).await;

    listed.assert_error(503, "service_unavailable");
    assert_eq!(listed.header("retry-after"), Some("1"));
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(2),
        "answered after {waited:?}, expected about the 500 ms pool timeout"
    );
    assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    assert_eq!(app.list("").await.len(), 1, "the slow create was kept");
}

#[actix_web::test]
async fn a_write_past_the_statement_timeout_gets_503_and_stores_nothing() {
    let app = TestApp::builder(Backend::Postgres)
        .setting("PETSTORE_STATEMENT_TIMEOUT", "1s")
        .spawn()
        .await;
    app.postgres().slow_down_inserts("10");
    let started = Instant::now();

    let response = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
    )
    .await;

    let message = response.assert_error(503, "service_unavailable");
    assert!(
        !message.contains("statement"),
        "internals leaked: {message}"
    );
    assert_eq!(response.header("retry-after"), Some("1"));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "answered after {:?}",
        started.elapsed()
    );
    assert_eq!(app.list("").await, Vec::<serde_json::Value>::new());
}
