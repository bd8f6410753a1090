//! Smaller holes a hostile client found, closed: a query parameter an operation would have
//! ignored is refused, as the listings refuse theirs; a `petId` below the int64 range is
//! refused, not read as the smallest int64; a huge path is not logged whole; text a client sent
//! comes back in an error message with its invisible and bidirectional characters escaped.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use petstore_test_support::{
    client, eventually, issue_key, send, start_server_logging_to, Backend, TestApp,
};

#[actix_web::test]
async fn every_operation_refuses_a_query_parameter_it_does_not_take() {
    let app = TestApp::spawn(Backend::Memory).await;
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet["id"]}).to_string()),
    )
    .await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let order = placed.json()["id"].as_i64().expect("an id");

    let get = |path: String| send(app.get(&path), None);
    let post = |path: String, body: Option<String>| send(app.post_json(&path), body);
    for (operation, response) in [
        (
            "getPet",
            get(format!("/v1/pets/{}?fields=name", pet["id"])).await,
        ),
        (
            "getOrder",
            get(format!("/v1/store/orders/{order}?fields=id")).await,
        ),
        (
            "createPet",
            post(
                "/v1/pets?dryRun=true".to_owned(),
                Some(json!({"name": "Tom", "categoryId": 1}).to_string()),
            )
            .await,
        ),
        (
            "placeOrder",
            post(
                "/v1/store/orders?quantity=2".to_owned(),
                Some(json!({"petId": pet["id"]}).to_string()),
            )
            .await,
        ),
        (
            "approveOrder",
            // The staff's operation: a `write` key is refused before the query is looked at.
            send(
                app.post_json_as(
                    &app.staff_key().await,
                    &format!("/v1/store/orders/{order}/approve?force=1"),
                ),
                None,
            )
            .await,
        ),
    ] {
        let message = response.assert_error(400, "invalid_parameter");
        assert!(
            message.contains(&format!("{operation} takes none")),
            "{operation}: {message}"
        );
    }
    // Nothing was done by the refused requests.
    assert_eq!(app.list("").await.len(), 1);
    let order = send(app.get(&format!("/v1/store/orders/{order}")), None).await;
    assert_eq!(order.json()["status"], "placed");
}

#[actix_web::test]
async fn a_pet_id_below_the_int64_range_is_refused_not_clamped() {
    let app = TestApp::spawn(Backend::Memory).await;
    for pet_id in ["-9223372036854775809", "9223372036854775808"] {
        let response = send(
            app.post_json("/v1/store/orders"),
            Some(format!(r#"{{"petId": {pet_id}}}"#)),
        )
        .await;
        let message = response.assert_error(400, "validation_failed");
        assert!(message.contains("`petId` must be an int64"), "{message}");
    }
    // The smallest int64 itself is a valid id: no such pet.
    let response = send(
        app.post_json("/v1/store/orders"),
        Some(r#"{"petId": -9223372036854775808}"#.to_owned()),
    )
    .await;
    response.assert_error(404, "not_found");
}

/// A 30 KB path is answered (404) and logged as its first 256 bytes and a mark, not whole.
#[actix_web::test]
async fn a_huge_path_is_logged_cut_and_marked() {
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!("sqlite://{}", dir.path().join("pets.db").display());
    let env = [("PETSTORE_LOG_FORMAT".to_owned(), "json".to_owned())];
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let started = start_server_logging_to(dir.path(), &url, &env, Stdio::from(log));
    let mut env = env.to_vec();
    env.push(("DATABASE_URL".to_owned(), url));
    let key = issue_key(dir.path(), &env, &["--name", "long paths"]);
    let path = format!("/v1/{}", "x".repeat(30_000));
    let response = send(
        client()
            .get(format!("{}{path}", started.address))
            .bearer_auth(&key),
        None,
    )
    .await;
    response.assert_error(404, "not_found");

    // The line is written by the log thread: poll the file for it.
    let line = eventually(
        Duration::from_secs(10),
        "a request line with a cut path",
        async || {
            let logged = std::fs::read_to_string(&log_path).expect("read the log");
            logged
                .lines()
                .find(|line| line.contains("more bytes not logged"))
                .map(str::to_owned)
                .ok_or(logged)
        },
    )
    .await;
    let mut child = started.child;
    let _ = child.kill();
    let _ = child.wait();
    let line: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
    let logged_path = line["path"].as_str().expect("a path");
    assert!(
        logged_path.len() < 400,
        "{} bytes logged",
        logged_path.len()
    );
    assert!(logged_path.starts_with("/v1/xxx"), "{logged_path}");
    assert!(
        logged_path.ends_with(&format!("...[{} more bytes not logged]", path.len() - 256)),
        "{logged_path}"
    );
}

/// In production `/metrics` is not for the public: not on the API's address (404, like any
/// route that is not there), only on the metrics address when one is set.
#[actix_web::test]
async fn in_production_metrics_are_served_only_on_their_own_address() {
    let secret = "production-metrics-test-secret-5b1e9c0a7d3f4e2b8a6c";
    for metrics_bind in [None, Some("127.0.0.1:0")] {
        let dir = tempfile::tempdir().expect("a directory");
        let url = format!("sqlite://{}", dir.path().join("pets.db").display());
        let mut env = vec![
            ("PETSTORE_ENV".to_owned(), "production".to_owned()),
            ("PETSTORE_KEY_SECRET".to_owned(), secret.to_owned()),
        ];
        if let Some(bind) = metrics_bind {
            env.push(("PETSTORE_METRICS_BIND".to_owned(), bind.to_owned()));
        }
        let started = start_server_logging_to(dir.path(), &url, &env, Stdio::null());
        let public = send(client().get(format!("{}/metrics", started.address)), None).await;
        public.assert_error(404, "not_found");
        match (metrics_bind, &started.metrics_address) {
            (Some(_), Some(address)) => {
                let scraped = send(client().get(format!("{address}/metrics")), None).await;
                assert_eq!(scraped.status, 200, "{}", scraped.body);
                assert!(scraped.body.contains("petstore_"), "{}", scraped.body);
            }
            (None, None) => {}
            other => panic!("metrics address {other:?}"),
        }
        let mut child = started.child;
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Every Bidi_Control character: each reorders how the text around it is displayed.
const BIDI_CONTROLS: [char; 12] = [
    '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// What a client sent comes back in an error message (a path segment, a query parameter's name
/// or value, a JSON field's name), with a bidirectional control written as `\u{202e}`, never as
/// itself: a message shown to a person must not be reordered by the text it quotes.
#[actix_web::test]
async fn client_text_in_a_message_has_its_bidi_controls_escaped() {
    let app = TestApp::spawn(Backend::Memory).await;
    for control in BIDI_CONTROLS {
        let mut encoded = [0; 4];
        let encoded: String = control
            .encode_utf8(&mut encoded)
            .bytes()
            .map(|byte| format!("%{byte:02X}"))
            .collect();
        let escaped = format!("a\\u{{{:x}}}b", u32::from(control));
        let field = json!({"name": "Rex", "categoryId": 1, format!("a{control}b"): 1});
        for (place, response, status, code) in [
            (
                "path segment",
                send(app.get(&format!("/v1/store/orders/a{encoded}b")), None).await,
                400,
                "invalid_parameter",
            ),
            (
                "query parameter name",
                send(app.get(&format!("/v1/pets?a{encoded}b=1")), None).await,
                400,
                "invalid_parameter",
            ),
            (
                "query parameter value",
                send(app.get(&format!("/v1/pets?id=a{encoded}b")), None).await,
                400,
                "invalid_parameter",
            ),
            (
                "field name",
                send(app.post_json("/v1/pets"), Some(field.to_string())).await,
                400,
                "validation_failed",
            ),
        ] {
            let message = response.assert_error(status, code);
            assert!(
                message.contains(&escaped) && !message.contains(control),
                "{place}, U+{:04X}: {message:?}",
                u32::from(control)
            );
        }
    }
}
