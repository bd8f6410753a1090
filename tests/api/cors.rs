//! Cross-origin calls from browsers (`PETSTORE_CORS_ORIGINS`), as a browser makes them: the
//! preflight for every header the OpenAPI document defines passes, every response header it
//! defines is readable, and a refused preflight says what it refused in the JSON `Error`.

use serde_json::json;

use petstore_test_support::{send, Backend, TestApp};

const ORIGIN: &str = "http://localhost:3000";

async fn spawn_with_cors() -> TestApp {
    TestApp::builder(Backend::Memory)
        .setting("PETSTORE_CORS_ORIGINS", ORIGIN)
        .spawn()
        .await
}

fn preflight(app: &TestApp, origin: &str, method: &str, headers: &str) -> awc::ClientRequest {
    app.client
        .request(awc::http::Method::OPTIONS, app.url("/v1/pets"))
        .insert_header(("Origin", origin))
        .insert_header(("Access-Control-Request-Method", method))
        .insert_header(("Access-Control-Request-Headers", headers))
}

fn listed(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|name| name.trim().to_ascii_lowercase())
        .collect()
}

/// What a browser does to create a pet with a retry key, twice: the preflight passes, and the
/// script can read that the second answer was a replay.
#[actix_web::test]
async fn a_browser_may_send_idempotency_key_and_read_idempotent_replayed() {
    let app = spawn_with_cors().await;
    let asked = send(
        preflight(
            &app,
            ORIGIN,
            "POST",
            "authorization,content-type,idempotency-key",
        ),
        None,
    )
    .await;
    assert_eq!(asked.status.as_u16(), 200, "{}", asked.body);
    assert_eq!(asked.header("access-control-allow-origin"), Some(ORIGIN));
    let allowed = listed(asked.header("access-control-allow-headers"));
    for name in ["authorization", "content-type", "idempotency-key"] {
        assert!(allowed.iter().any(|allowed| allowed == name), "{allowed:?}");
    }

    let create = || {
        send(
            app.post_json("/v1/pets")
                .insert_header(("Origin", ORIGIN))
                .insert_header(("Idempotency-Key", "browser-create-1")),
            Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
        )
    };
    let first = create().await;
    assert_eq!(first.status.as_u16(), 201, "{}", first.body);
    let replayed = create().await;
    assert_eq!(replayed.status.as_u16(), 201, "{}", replayed.body);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(replayed.header("access-control-allow-origin"), Some(ORIGIN));
    let exposed = listed(replayed.header("access-control-expose-headers"));
    for name in [
        "idempotent-replayed",
        "location",
        "x-request-id",
        "ratelimit",
    ] {
        assert!(exposed.iter().any(|exposed| exposed == name), "{exposed:?}");
    }
}

/// A refused preflight is the JSON `Error`, 403 `cors_refused`, naming the header, method or
/// origin it refused.
#[actix_web::test]
async fn a_refused_preflight_names_what_it_refused() {
    let app = spawn_with_cors().await;
    for (origin, method, headers, named) in [
        (ORIGIN, "POST", "authorization,x-foo", "header `x-foo`"),
        (ORIGIN, "PUT", "authorization", "method `PUT`"),
        (
            "https://evil.example",
            "GET",
            "authorization",
            "origin `https://evil.example`",
        ),
    ] {
        let refused = send(preflight(&app, origin, method, headers), None).await;
        let message = refused.assert_error(403, "cors_refused");
        assert!(message.contains(named), "{message}");
        assert!(refused.header("access-control-allow-origin").is_none());
    }
}
