//! Requests outside the three operations: unknown paths, wrong methods, health checks. They too
//! answer with the spec's JSON `Error`, never a framework's plain text.

use crate::helpers::{send, TestApp};
use crate::on_backends;

async fn unknown_paths_are_json_404s(app: TestApp) {
    for path in [
        "/",
        "/v1",
        "/v2/pets",
        "/v1/pet",
        "/v1/pets/1/owner",
        "/v1/store/orders",
    ] {
        let response = send(app.get(path), None).await;
        response.assert_error(404, "not_found");
    }
}

async fn wrong_methods_are_json_405s_with_allow(app: TestApp) {
    let cases = [
        (app.client.put(app.url("/v1/pets")), "GET, POST"),
        (app.client.delete(app.url("/v1/pets")), "GET, POST"),
        (app.client.patch(app.url("/v1/pets")), "GET, POST"),
        (app.client.post(app.url("/v1/pets/1")), "GET"),
        (app.client.delete(app.url("/v1/pets/1")), "GET"),
        (app.client.put(app.url("/v1/pets/1")), "GET"),
    ];
    for (request, allow) in cases {
        let response = send(request.bearer_auth(&app.api_key), None).await;
        response.assert_error(405, "method_not_allowed");
        let mut allowed: Vec<_> = response
            .header("allow")
            .expect("an Allow header")
            .split(',')
            .map(str::trim)
            .filter(|method| *method != "HEAD")
            .collect();
        allowed.sort_unstable();
        assert_eq!(allowed.join(", "), allow);
    }
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

// Routing does not depend on the backend.
on_backends!(
    [memory]
    unknown_paths_are_json_404s,
    wrong_methods_are_json_405s_with_allow,
);

// Readiness asks storage (against a database that is down: tests/outage).
mod health {
    use super::*;
    on_backends!([memory, sqlite, postgres] health_checks_need_no_key);
}
