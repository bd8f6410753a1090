//! Requests outside the operations: where to start, unknown paths, wrong methods, health checks.
//! Errors among them too answer with the spec's JSON `Error`, never a framework's plain text.

use petstore_test_support::on_backends;
use petstore_test_support::{send, Backend, TestApp};

async fn unknown_paths_are_json_404s(app: TestApp) {
    for path in [
        "/v1/",
        "/index.html",
        "/v2/pets",
        "/v1/pet",
        "/v1/pets/1/owner",
        "/v1/store/inventory/available",
        "/v1/store/orders/1/ship",
    ] {
        let response = send(app.get(path), None).await;
        response.assert_error(404, "not_found");
    }
}

async fn wrong_methods_are_json_405s_with_allow(app: TestApp) {
    let cases = [
        (app.client.put(app.url("/v1/pets")), "GET, HEAD, POST"),
        (app.client.delete(app.url("/v1/pets")), "GET, HEAD, POST"),
        (app.client.patch(app.url("/v1/pets")), "GET, HEAD, POST"),
        (
            app.client.post(app.url("/v1/pets/1")),
            "GET, HEAD, PATCH, DELETE",
        ),
        (
            app.client.put(app.url("/v1/pets/1")),
            "GET, HEAD, PATCH, DELETE",
        ),
        (app.client.post(app.url("/healthz")), "GET, HEAD"),
        (
            app.client.put(app.url("/v1/store/orders")),
            "GET, HEAD, POST",
        ),
        (
            app.client.get(app.url("/v1/store/orders/1/approve")),
            "POST",
        ),
        (
            app.client.delete(app.url("/v1/store/orders/1/cancel")),
            "POST",
        ),
        (app.client.post(app.url("/v1/store/orders/1")), "GET, HEAD"),
    ];
    for (request, allow) in cases {
        let response = send(request.bearer_auth(&app.api_key), None).await;
        response.assert_error(405, "method_not_allowed");
        assert_eq!(response.header("allow"), Some(allow));
    }
}

/// RFC 9110: HEAD wherever GET is served, with GET's status and headers and no body (load
/// balancers check health with it).
async fn head_answers_like_get_without_a_body(app: TestApp) {
    let pet = app
        .create_pet(serde_json::json!({"name": "Rex", "categoryId": 1}))
        .await;
    for (path, keyed) in [
        ("/healthz".to_owned(), false),
        ("/readyz".to_owned(), false),
        ("/docs/".to_owned(), false),
        ("/v1/openapi.json".to_owned(), false),
        ("/v1/pets?limit=1".to_owned(), true),
        (format!("/v1/pets/{}", pet["id"]), true),
        ("/v1/pets/424242".to_owned(), true),
        ("/v1/pets".to_owned(), false),
    ] {
        let with_key = |request: awc::ClientRequest| {
            if keyed {
                request.bearer_auth(&app.api_key)
            } else {
                request
            }
        };
        let got = send(with_key(app.client.get(app.url(&path))), None).await;
        let head = send(with_key(app.client.head(app.url(&path))), None).await;
        assert_eq!(head.status, got.status, "HEAD {path}");
        assert_eq!(
            head.header("content-type"),
            got.header("content-type"),
            "HEAD {path}"
        );
        assert!(
            head.body.is_empty(),
            "HEAD {path} sent a body: {}",
            head.body
        );
        assert!(!got.body.is_empty(), "GET {path} has a body to leave out");
    }
}

/// What someone who tries the address first finds, without a key: where the documentation and
/// the OpenAPI document are, in the body and as `Link`s, and both links lead somewhere.
async fn the_root_and_v1_point_to_the_documentation(app: TestApp) {
    for path in ["/", "/v1"] {
        let response = send(app.client.get(app.url(path)), None).await;
        assert_eq!(response.status.as_u16(), 200, "{path}: {}", response.body);
        let start = response.json();
        assert_eq!(
            start,
            serde_json::json!({
                "name": "petstore",
                "version": "1.0.0",
                "documentation": "/docs",
                "openapi": "/v1/openapi.json",
            }),
            "{path}"
        );
        assert_eq!(
            response.header("link"),
            Some(r#"</docs>; rel="service-doc", </v1/openapi.json>; rel="service-desc""#),
            "{path}"
        );
        let docs = send(app.client.get(app.url("/docs/")), None).await;
        assert_eq!(docs.status.as_u16(), 200);
        let document = send(
            app.client
                .get(app.url(start["openapi"].as_str().unwrap_or_default())),
            None,
        )
        .await;
        assert_eq!(document.status.as_u16(), 200);
        assert_eq!(document.json()["info"]["version"], start["version"]);
        assert_eq!(document.json()["info"]["title"], start["name"]);
    }
}

/// `GET /` is counted in the client address's bucket, like the other endpoints without a key.
#[actix_web::test]
async fn the_root_takes_from_the_client_addresss_bucket() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_CLIENT_RATE_LIMIT", "2/m")
        .spawn()
        .await;
    for _ in 0..2 {
        let response = send(app.client.get(app.url("/")), None).await;
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
        assert_eq!(
            response.header("ratelimit-policy"),
            Some(r#""per-client";q=2;w=60"#)
        );
    }
    send(app.client.get(app.url("/v1")), None)
        .await
        .assert_error(429, "rate_limited");
}

async fn health_checks_need_no_key(app: TestApp) {
    for (path, status) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let response = send(app.client.get(app.url(path)), None).await;
        assert_eq!(response.status.as_u16(), 200, "{path}: {}", response.body);
        assert_eq!(
            response.json(),
            serde_json::json!({ "status": status }),
            "{path}"
        );
    }
}

/// Hardening headers: no content sniffing and no referrer on every response, no shared caching
/// of what a key holder was shown, and a content security policy on the documentation.
async fn responses_carry_the_hardening_headers(app: TestApp) {
    let anonymous = [
        send(app.client.get(app.url("/healthz")), None).await,
        send(app.client.get(app.url("/nowhere")), None).await,
        send(app.client.get(app.url("/v1/pets")), None).await,
        send(app.client.get(app.url("/docs/")), None).await,
        send(app.client.get(app.url("/v1/openapi.json")), None).await,
    ];
    let keyed = [
        send(app.get("/v1/pets"), None).await,
        send(app.get("/v1/pets/424242"), None).await,
        send(
            app.post_json("/v1/pets"),
            Some(r#"{"name":"Rex","categoryId":1}"#.to_owned()),
        )
        .await,
    ];
    for response in anonymous.iter().chain(&keyed) {
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(response.header("referrer-policy"), Some("no-referrer"));
    }
    // Reads may be kept by their own client, which revalidates them; a write's answer is not
    // kept at all.
    for (response, cache_control) in
        keyed
            .iter()
            .zip(["private, no-cache", "private, no-cache", "no-store"])
    {
        assert_eq!(
            response.header("cache-control"),
            Some(cache_control),
            "{} {}",
            response.status,
            response.body
        );
    }
    let csp = anonymous[3]
        .header("content-security-policy")
        .expect("the docs page has a content security policy");
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
}

// Routing does not depend on the backend.
on_backends!(
    [memory]
    the_root_and_v1_point_to_the_documentation,
    unknown_paths_are_json_404s,
    wrong_methods_are_json_405s_with_allow,
    head_answers_like_get_without_a_body,
    responses_carry_the_hardening_headers,
);

// Readiness asks storage (against a database that is down: tests/outage).
mod health {
    use super::*;
    on_backends!([memory, sqlite, postgres] health_checks_need_no_key);
}
