//! What an operator relies on: metrics after known traffic, request ids on every response and
//! log line, logs that never hold a secret, per-key rate limits, CORS, and a SIGTERM under load
//! that loses nothing.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{client, eventually, send, start_server_logging_to, Backend, TestApp};

/// The value of the sample of `name` whose labels include all of `labels`, if there is one.
fn sample(exposition: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    exposition.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        let (label_text, value) = match rest.strip_prefix('{') {
            Some(rest) => rest.split_once("} ")?,
            None => ("", rest.strip_prefix(' ')?),
        };
        labels
            .iter()
            .all(|(key, value)| label_text.contains(&format!("{key}=\"{value}\"")))
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

async fn scrape(address: &str) -> String {
    let response = send(client().get(format!("{address}/metrics")), None).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    assert!(
        response
            .header("content-type")
            .is_some_and(|value| value.starts_with("text/plain")),
        "{:?}",
        response.header("content-type")
    );
    response.body
}

#[actix_web::test]
async fn metrics_count_known_traffic_by_operation_status_and_reason() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    for _ in 0..3 {
        assert_eq!(send(app.get("/v1/pets"), None).await.status.as_u16(), 200);
    }
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let tom = app
        .create_pet(json!({"name": "Tom", "categoryId": 1}))
        .await;
    assert_eq!(
        send(app.get(&format!("/v1/pets/{}", pet["id"])), None)
            .await
            .status
            .as_u16(),
        200
    );
    assert_eq!(
        send(app.get("/v1/pets/999999"), None).await.status.as_u16(),
        404
    );
    for _ in 0..2 {
        let response = send(app.client.get(app.url("/v1/pets")), None).await;
        assert_eq!(response.status.as_u16(), 401);
    }
    let forged = send(
        app.client.get(app.url("/v1/pets")).bearer_auth("not.a.key"),
        None,
    )
    .await;
    assert_eq!(forged.status.as_u16(), 401);
    assert_eq!(
        send(app.client.get(app.url("/no/such/path")), None)
            .await
            .status
            .as_u16(),
        404
    );
    assert_eq!(
        send(app.client.delete(app.url("/v1/pets")), None)
            .await
            .status
            .as_u16(),
        405
    );
    // Every order operation, each once.
    let order = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": tom["id"]}).to_string()),
    )
    .await;
    assert_eq!(order.status.as_u16(), 201, "{}", order.body);
    let order_path = format!("/v1/store/orders/{}", order.json()["id"]);
    let staff = app.staff_key().await;
    for (request, status) in [
        (app.get("/v1/store/orders"), 200),
        (app.get(&order_path), 200),
        (
            app.post_json_as(&staff, &format!("{order_path}/approve")),
            200,
        ),
        (
            app.post_json_as(&staff, &format!("{order_path}/deliver")),
            200,
        ),
        (app.post_json(&format!("{order_path}/cancel")), 409),
    ] {
        assert_eq!(send(request, None).await.status.as_u16(), status);
    }

    let metrics = scrape(&app.address).await;
    let requests = |operation: &str, method: &str, status: &str| {
        sample(
            &metrics,
            "petstore_http_requests_total",
            &[
                ("operation", operation),
                ("method", method),
                ("status", status),
            ],
        )
    };
    // listPets: 3 answered, plus the 3 refused (and whatever issuing the key's wait sent).
    assert!(
        requests("listPets", "GET", "200").is_some_and(|n| n >= 3.0),
        "{metrics}"
    );
    assert_eq!(requests("createPet", "POST", "201"), Some(2.0), "{metrics}");
    assert_eq!(requests("getPet", "GET", "200"), Some(1.0), "{metrics}");
    assert_eq!(requests("getPet", "GET", "404"), Some(1.0), "{metrics}");
    assert!(
        requests("listPets", "GET", "401").is_some_and(|n| n >= 3.0),
        "{metrics}"
    );
    assert_eq!(requests("not_found", "GET", "404"), Some(1.0), "{metrics}");
    assert_eq!(
        requests("method_not_allowed", "DELETE", "405"),
        Some(1.0),
        "{metrics}"
    );
    // Each order operation under its `operationId`.
    for (operation, method, status) in [
        ("placeOrder", "POST", "201"),
        ("listOrders", "GET", "200"),
        ("getOrder", "GET", "200"),
        ("approveOrder", "POST", "200"),
        ("deliverOrder", "POST", "200"),
        ("cancelOrder", "POST", "409"),
    ] {
        assert_eq!(
            requests(operation, method, status),
            Some(1.0),
            "{operation}: {metrics}"
        );
    }
    assert!(
        !metrics.contains("/no/such/path") && !metrics.contains("/v1/pets/"),
        "raw paths must not become labels"
    );
    assert_eq!(
        sample(
            &metrics,
            "petstore_http_request_duration_seconds_count",
            &[("operation", "createPet")]
        ),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            "petstore_api_key_refusals_total",
            &[("reason", "missing")]
        ),
        Some(2.0),
        "{metrics}"
    );
    assert!(
        sample(
            &metrics,
            "petstore_api_key_refusals_total",
            &[("reason", "invalid_token")]
        )
        .is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "petstore_db_create_batch_size_sum", &[]),
        Some(2.0),
        "{metrics}"
    );
    assert!(
        sample(&metrics, "petstore_db_create_commit_seconds_count", &[]).is_some_and(|n| n >= 1.0)
    );
    assert!(
        sample(&metrics, "petstore_db_connections", &[("state", "idle")]).is_some(),
        "{metrics}"
    );
    assert!(sample(
        &metrics,
        "petstore_db_connection_wait_seconds_count",
        &[("use", "write")]
    )
    .is_some());
    assert_eq!(
        sample(
            &metrics,
            "petstore_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        Some(1.0),
        "{metrics}"
    );
}

/// What `/metrics` exposes after traffic of every kind passes Prometheus's own linter
/// (`promtool check metrics`: HELP and TYPE on every family, names and units by the
/// conventions), with the standard process families and the gauges an operator watches.
#[actix_web::test]
async fn the_metrics_pass_promtool_with_the_process_and_queue_families() {
    let app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_RATE_LIMIT", "600/m,burst=30")
        .in_a_process()
        .spawn()
        .await;
    for n in 0..20 {
        let created = send(
            app.post_json("/v1/pets"),
            Some(json!({"name": format!("Rex {n}"), "categoryId": 1}).to_string()),
        )
        .await;
        assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    }
    assert_eq!(send(app.get("/v1/pets"), None).await.status.as_u16(), 200);
    send(app.get("/v1/pets/999999"), None)
        .await
        .assert_error(404, "not_found");
    send(app.client.get(app.url("/v1/pets")), None)
        .await
        .assert_error(401, "unauthorized");
    // Past the key's burst: some 429s.
    let answers = join_all((0..20).map(|_| send(app.get("/v1/pets/1"), None))).await;
    assert!(answers.iter().any(|answer| answer.status.as_u16() == 429));

    let metrics = scrape(&app.address).await;
    for family in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_max_fds",
        "process_start_time_seconds",
        "petstore_db_create_queue_depth",
        "petstore_db_connections",
        "petstore_db_create_batch_size_bucket",
    ] {
        assert!(
            metrics.lines().any(|line| line.starts_with(family)),
            "no {family} in:\n{metrics}"
        );
    }
    assert_eq!(
        sample(&metrics, "petstore_http_requests_in_flight", &[]),
        Some(1.0),
        "the scrape itself is the one request in flight:\n{metrics}"
    );

    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool (`make deps-test` installs Debian's prometheus package)");
    std::io::Write::write_all(
        &mut promtool.stdin.take().expect("piped stdin"),
        metrics.as_bytes(),
    )
    .expect("hand promtool the scrape");
    let checked = promtool.wait_with_output().expect("promtool ran");
    assert!(
        checked.status.success() && checked.stdout.is_empty() && checked.stderr.is_empty(),
        "promtool check metrics: {}{}\non:\n{metrics}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // Every metric a dashboard query or an alert names is one this scrape has.
    let exported: BTreeSet<&str> = metrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    let manifest_dir = env!("CARGO_MANIFEST_DIR");
    for file in [
        "deploy/grafana/petstore.json",
        "deploy/prometheus/alerts.yml",
    ] {
        let text = std::fs::read_to_string(format!("{manifest_dir}/../../{file}"))
            .unwrap_or_else(|err| panic!("read {file}: {err}"));
        let named = metric_names(&text);
        assert!(named.len() >= 4, "{file} names only {named:?}");
        for name in named {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix))
                .filter(|family| exported.contains(family))
                .unwrap_or(&name);
            assert!(
                exported.contains(family),
                "{file} names {name}, which /metrics does not export"
            );
        }
    }
}

/// The `petstore_*` and `process_*` metric names in a dashboard or rule file.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    for prefix in ["petstore_", "process_"] {
        for (at, _) in text.match_indices(prefix) {
            let starts_a_word =
                at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            if !starts_a_word {
                continue;
            }
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

/// With `PETSTORE_METRICS_BIND`, `/metrics` is served there only; rate-limited requests are
/// counted.
#[actix_web::test]
async fn metrics_can_have_an_address_of_their_own_and_count_rate_limited_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [
        ("PETSTORE_METRICS_BIND".to_owned(), "127.0.0.1:0".to_owned()),
        ("PETSTORE_RATE_LIMIT".to_owned(), "1/m".to_owned()),
    ];
    let mut started = start_server_logging_to(dir.path(), "memory:", &env, Stdio::null());
    let metrics_address = started.metrics_address.clone().expect("a metrics address");
    assert_ne!(metrics_address, started.address);
    let on_api = send(client().get(format!("{}/metrics", started.address)), None).await;
    on_api.assert_error(404, "not_found");

    let key = started
        .startup_key
        .clone()
        .expect("a memory server prints a key");
    let list = || {
        client()
            .get(format!("{}/v1/pets", started.address))
            .bearer_auth(&key)
    };
    assert_eq!(send(list(), None).await.status.as_u16(), 200);
    send(list(), None).await.assert_error(429, "rate_limited");
    for path in ["/v1/pets/1", "/v1/store/orders/1/approve"] {
        let request = if path.ends_with("approve") {
            client().post(format!("{}{path}", started.address))
        } else {
            client().get(format!("{}{path}", started.address))
        };
        send(request.bearer_auth(&key), None)
            .await
            .assert_error(429, "rate_limited");
    }

    let metrics = scrape(&metrics_address).await;
    assert!(metrics.contains("petstore_build_info"), "{metrics}");
    assert_eq!(
        sample(
            &metrics,
            "petstore_rate_limited_total",
            &[("operation", "listPets")]
        ),
        Some(1.0),
        "{metrics}"
    );
    for operation in ["getPet", "approveOrder"] {
        assert_eq!(
            sample(
                &metrics,
                "petstore_rate_limited_total",
                &[("operation", operation)]
            ),
            Some(1.0),
            "{operation}: {metrics}"
        );
    }
    let _ = started.child.kill();
    let _ = started.child.wait();
}

fn is_uuid_v7(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && groups[2].starts_with('7')
}

async fn every_response_has_a_request_id_and_a_sane_one_is_kept(app: TestApp) {
    let responses = [
        send(app.get("/v1/pets"), None).await,
        send(app.client.get(app.url("/v1/pets")), None).await,
        send(app.client.get(app.url("/nowhere")), None).await,
        send(app.client.get(app.url("/healthz")), None).await,
    ];
    let mut seen = BTreeSet::new();
    for response in &responses {
        let id = response
            .header("x-request-id")
            .expect("every response has one");
        assert!(is_uuid_v7(id), "{id}");
        seen.insert(id.to_owned());
    }
    assert_eq!(seen.len(), responses.len(), "ids are unique");

    let mine = send(
        app.get("/v1/pets")
            .insert_header(("X-Request-Id", "order-7f3a trace")),
        None,
    )
    .await;
    assert_eq!(mine.header("x-request-id"), Some("order-7f3a trace"));
    let too_long = "x".repeat(129);
    let replaced = send(
        app.get("/v1/pets")
            .insert_header(("X-Request-Id", too_long.as_str())),
        None,
    )
    .await;
    assert!(is_uuid_v7(
        replaced.header("x-request-id").unwrap_or_default()
    ));
}

/// A limit of 3 per minute: the fourth call is 429 with the draft's headers; another key and
/// unauthenticated callers are unaffected, and never touch a key's bucket.
async fn each_key_has_its_own_bucket_and_429_says_when_to_retry(app: TestApp) {
    let other = app.issue_key(&["--name", "other"]).await;
    // An unauthenticated flood first: 401s that take nothing from any bucket.
    for _ in 0..20 {
        let response = send(app.client.get(app.url("/v1/pets")), None).await;
        assert_eq!(response.status.as_u16(), 401);
        assert!(response.header("ratelimit").is_none());
    }
    // 3 a minute: a token comes back every 20 s. The response that takes the last one says
    // so (`t=20`), rather than `t=0` for a next request that would be refused.
    for (remaining, reset) in [(2, 0), (1, 0), (0, 20)] {
        let response = send(app.get("/v1/pets"), None).await;
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
        assert_eq!(
            response.header("ratelimit-policy"),
            Some(r#""per-key";q=3;w=60"#)
        );
        assert_eq!(
            response.header("ratelimit"),
            Some(format!(r#""per-key";r={remaining};t={reset}"#).as_str())
        );
    }
    let limited = send(app.get("/v1/pets"), None).await;
    limited.assert_error(429, "rate_limited");
    let retry_after: u64 = limited
        .header("retry-after")
        .and_then(|value| value.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=20).contains(&retry_after), "{retry_after}");
    assert_eq!(
        limited.header("ratelimit-policy"),
        Some(r#""per-key";q=3;w=60"#)
    );
    assert_eq!(
        limited.header("ratelimit"),
        Some(format!(r#""per-key";r=0;t={retry_after}"#).as_str())
    );
    let created = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
    )
    .await;
    created.assert_error(429, "rate_limited");
    // What a resource says on every response it says on its 429s too.
    let get_pet = send(app.get("/v1/pets/1"), None).await;
    get_pet.assert_error(429, "rate_limited");
    for header in ["deprecation", "sunset", "link", "retry-after", "ratelimit"] {
        assert!(
            get_pet.header(header).is_some(),
            "getPet's 429 lacks {header}"
        );
    }
    let orders = send(app.get("/v1/store/orders"), None).await;
    orders.assert_error(429, "rate_limited");
    assert_eq!(orders.header("x-api-stability"), Some("experimental"));
    assert!(orders.header("retry-after").is_some());

    let response = send(
        app.client.get(app.url("/v1/pets")).bearer_auth(&other),
        None,
    )
    .await;
    assert_eq!(
        response.status.as_u16(),
        200,
        "another key has its own bucket"
    );
    assert_eq!(
        response.json(),
        json!([]),
        "the limited create stored nothing"
    );
}

async fn cross_origin_calls_are_answered_for_the_configured_origin_only(app: TestApp) {
    const ORIGIN: &str = "https://app.example.com";
    let preflight = send(
        app.client
            .request(awc::http::Method::OPTIONS, app.url("/v1/pets"))
            .insert_header(("Origin", ORIGIN))
            .insert_header(("Access-Control-Request-Method", "POST"))
            .insert_header((
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )),
        None,
    )
    .await;
    assert_eq!(preflight.status.as_u16(), 200, "{}", preflight.body);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some(ORIGIN)
    );
    let methods = preflight
        .header("access-control-allow-methods")
        .unwrap_or_default();
    assert!(
        methods.contains("POST") && methods.contains("GET"),
        "{methods}"
    );
    let headers = preflight
        .header("access-control-allow-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        headers.contains("authorization") && headers.contains("content-type"),
        "{headers}"
    );

    app.create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    app.create_pet(json!({"name": "Tom", "categoryId": 1}))
        .await;
    let page = send(
        app.get("/v1/pets?limit=1")
            .insert_header(("Origin", ORIGIN)),
        None,
    )
    .await;
    assert_eq!(page.status.as_u16(), 200);
    assert_eq!(page.header("access-control-allow-origin"), Some(ORIGIN));
    let exposed = page
        .header("access-control-expose-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    for header in [
        "link",
        "location",
        "retry-after",
        "x-request-id",
        "deprecation",
        "sunset",
        "ratelimit",
    ] {
        assert!(exposed.contains(header), "{header} not exposed: {exposed}");
    }

    let stranger = send(
        app.get("/v1/pets")
            .insert_header(("Origin", "https://evil.example")),
        None,
    )
    .await;
    assert!(stranger.header("access-control-allow-origin").is_none());
}

async fn without_cors_configured_a_preflight_is_405(app: TestApp) {
    let preflight = send(
        app.client
            .request(awc::http::Method::OPTIONS, app.url("/v1/pets"))
            .insert_header(("Origin", "https://app.example.com"))
            .insert_header(("Access-Control-Request-Method", "GET")),
        None,
    )
    .await;
    preflight.assert_error(405, "method_not_allowed");
    assert!(preflight.header("access-control-allow-origin").is_none());
}

on_backends!([memory] every_response_has_a_request_id_and_a_sane_one_is_kept, without_cors_configured_a_preflight_is_405);

mod limits {
    use super::*;

    async fn spawn_limited(backend: &str) -> TestApp {
        TestApp::builder(petstore_test_support::backend_named(backend))
            .setting("PETSTORE_RATE_LIMIT", "3/m")
            .spawn()
            .await
    }

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::spawn_limited,
        [memory, sqlite]
        each_key_has_its_own_bucket_and_429_says_when_to_retry
    );

    /// Probing is not free: a key's 403s take from its own bucket, and refused keys (401) and
    /// the endpoints without a key take from the client address's bucket, with the same 429.
    #[actix_web::test]
    async fn refusals_and_anonymous_requests_take_from_a_bucket() {
        let app = TestApp::builder(Backend::Memory)
            .setting("PETSTORE_RATE_LIMIT", "3/m")
            .setting("PETSTORE_CLIENT_RATE_LIMIT", "4/m")
            .spawn()
            .await;
        let reader = app
            .issue_key(&["--name", "reader", "--scope", "read"])
            .await;
        let create = || {
            send(
                app.client
                    .post(app.url("/v1/pets"))
                    .bearer_auth(&reader)
                    .insert_header(("Content-Type", "application/json")),
                Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
            )
        };
        for remaining in [2, 1, 0] {
            let refused = create().await;
            refused.assert_error(403, "forbidden");
            assert!(
                refused
                    .header("ratelimit")
                    .is_some_and(|value| value.starts_with(&format!(r#""per-key";r={remaining};"#))),
                "{:?}",
                refused.header("ratelimit")
            );
        }
        create().await.assert_error(429, "rate_limited");

        let anonymous = || send(app.client.get(app.url("/v1/pets")), None);
        let health = || send(app.client.get(app.url("/healthz")), None);
        // One address, one bucket of 4: two refused keys, two health checks, then 429s.
        anonymous().await.assert_error(401, "unauthorized");
        let checked = health().await;
        assert_eq!(checked.status.as_u16(), 200);
        assert_eq!(
            checked.header("ratelimit-policy"),
            Some(r#""per-client";q=4;w=60"#)
        );
        anonymous().await.assert_error(401, "unauthorized");
        assert_eq!(health().await.status.as_u16(), 200);
        let limited = anonymous().await;
        limited.assert_error(429, "rate_limited");
        assert!(limited.header("retry-after").is_some());
        assert!(limited
            .header("ratelimit")
            .is_some_and(|value| value.starts_with(r#""per-client";r=0;"#)));
        health().await.assert_error(429, "rate_limited");
        let other_path = send(app.client.get(app.url("/v1/openapi.json")), None).await;
        other_path.assert_error(429, "rate_limited");
        // Naming another client in a forwarding header changes nothing: no proxy is trusted.
        let spoofed = send(
            app.client
                .get(app.url("/healthz"))
                .insert_header(("X-Forwarded-For", "203.0.113.7")),
            None,
        )
        .await;
        spoofed.assert_error(429, "rate_limited");

        // A key that works is counted against its own bucket only.
        let listed = send(app.get("/v1/pets"), None).await;
        assert_eq!(listed.status.as_u16(), 200, "{}", listed.body);
    }

    /// Behind a trusted proxy, each forwarded client has a bucket of its own.
    #[actix_web::test]
    async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket() {
        let app = TestApp::builder(Backend::Memory)
            .setting("PETSTORE_CLIENT_RATE_LIMIT", "2/m")
            .setting("PETSTORE_TRUSTED_PROXIES", "127.0.0.0/8")
            .spawn()
            .await;
        let from = |client: &'static str| {
            send(
                app.client
                    .get(app.url("/readyz"))
                    .insert_header(("X-Forwarded-For", client)),
                None,
            )
        };
        assert_eq!(from("203.0.113.1").await.status.as_u16(), 200);
        assert_eq!(from("203.0.113.1").await.status.as_u16(), 200);
        from("203.0.113.1").await.assert_error(429, "rate_limited");
        assert_eq!(from("203.0.113.2").await.status.as_u16(), 200);
    }

    /// Behind a trusted proxy that writes `X-Forwarded-For` (the default), a `Forwarded` header
    /// the client sent itself, which the proxy passes on, does not pick the client's bucket.
    #[actix_web::test]
    async fn a_client_cannot_pick_its_bucket_with_a_header_the_proxy_does_not_write() {
        let app = TestApp::builder(Backend::Memory)
            .setting("PETSTORE_CLIENT_RATE_LIMIT", "2/m")
            .setting("PETSTORE_TRUSTED_PROXIES", "127.0.0.0/8")
            .spawn()
            .await;
        let from = |spoofed: &str| {
            send(
                app.client
                    .get(app.url("/readyz"))
                    .insert_header(("Forwarded", spoofed))
                    .insert_header(("X-Forwarded-For", "203.0.113.1")),
                None,
            )
        };
        assert_eq!(from("for=198.51.100.1").await.status.as_u16(), 200);
        assert_eq!(from("for=198.51.100.2").await.status.as_u16(), 200);
        from("for=198.51.100.3")
            .await
            .assert_error(429, "rate_limited");
    }

    /// With `PETSTORE_CLIENT_ADDRESS_HEADER=forwarded` the reverse: the proxy's `Forwarded`
    /// names the client, and `X-Forwarded-For` is ignored.
    #[actix_web::test]
    async fn with_forwarded_named_the_client_is_read_from_forwarded_only() {
        let app = TestApp::builder(Backend::Memory)
            .setting("PETSTORE_CLIENT_RATE_LIMIT", "2/m")
            .setting("PETSTORE_TRUSTED_PROXIES", "127.0.0.0/8")
            .setting("PETSTORE_CLIENT_ADDRESS_HEADER", "forwarded")
            .spawn()
            .await;
        let from = |forwarded: &str, spoofed: &str| {
            send(
                app.client
                    .get(app.url("/readyz"))
                    .insert_header(("Forwarded", forwarded))
                    .insert_header(("X-Forwarded-For", spoofed)),
                None,
            )
        };
        let client = "for=203.0.113.1;proto=http";
        assert_eq!(from(client, "198.51.100.1").await.status.as_u16(), 200);
        assert_eq!(from(client, "198.51.100.2").await.status.as_u16(), 200);
        from(client, "198.51.100.3")
            .await
            .assert_error(429, "rate_limited");
        let other = "for=203.0.113.2;proto=http";
        assert_eq!(from(other, "198.51.100.3").await.status.as_u16(), 200);
    }
}

mod cors {
    use super::*;

    async fn spawn_with_cors(backend: &str) -> TestApp {
        TestApp::builder(petstore_test_support::backend_named(backend))
            .setting("PETSTORE_CORS_ORIGINS", "https://app.example.com")
            .spawn()
            .await
    }

    petstore_test_support::database::on_backends!(
        #[actix_web::test] super::spawn_with_cors,
        [memory]
        cross_origin_calls_are_answered_for_the_configured_origin_only
    );
}

/// Logs are JSON when not on a terminal; every line of a request carries its id, and no format
/// ever shows the database password, the key secret or a token.
#[actix_web::test]
async fn json_logs_carry_request_ids_and_never_a_secret() {
    let database = petstore_test_support::TestDatabase::migrated(|url| {
        let url = url.parse().expect("a PostgreSQL URL");
        petstore_persistence::migrate(&url, &petstore_persistence::PoolSettings::default())
            .expect("migrate the template database");
    });
    // The test cluster trusts local connections: the password is accepted and ignored.
    let password = "db-password-5f2e9";
    let url = database
        .url()
        .replacen("postgres@", &format!("postgres:{password}@"), 1);
    let secret = "log-test-key-secret-8c1d0b7a9e6f4c3d2b1a0f9e8d7c6b5a";
    for format in ["json", "text"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let log_path = dir.path().join("server.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        let mut env = vec![
            ("PETSTORE_KEY_SECRET".to_owned(), secret.to_owned()),
            ("DATABASE_URL".to_owned(), url.clone()),
        ];
        if format == "text" {
            env.push(("PETSTORE_LOG_FORMAT".to_owned(), "text".to_owned()));
        }
        let started = start_server_logging_to(dir.path(), &url, &env, Stdio::from(log));
        let mut child = started.child;
        let key = petstore_test_support::issue_key(dir.path(), &env, &["--name", "logged"]);
        let request_id = eventually(Duration::from_secs(5), "the new key accepted", async || {
            let response = send(
                client()
                    .get(format!("{}/v1/pets", started.address))
                    .insert_header(("User-Agent", "petstore-log-test/1.0"))
                    .insert_header((
                        "traceparent",
                        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    ))
                    .bearer_auth(&key),
                None,
            )
            .await;
            if response.status.as_u16() == 200 {
                Ok(response
                    .header("x-request-id")
                    .unwrap_or_default()
                    .to_owned())
            } else {
                Err(response.status)
            }
        })
        .await;
        let refused = send(
            client()
                .get(format!("{}/v1/pets", started.address))
                .bearer_auth(format!("{key}x")),
            None,
        )
        .await;
        assert_eq!(refused.status.as_u16(), 401);
        let terminated = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(terminated.success());
        let status = child.wait().expect("reap");
        assert!(status.success(), "{status}");

        let log = std::fs::read_to_string(&log_path).expect("read the log");
        for secret_text in [password, secret, key.as_str()] {
            assert!(
                !log.contains(secret_text),
                "{format} log shows a secret:\n{log}"
            );
        }
        let token_signature = key.rsplit('.').next().unwrap_or_default();
        assert!(
            !log.contains(token_signature),
            "{format} log shows part of a token"
        );
        let request_line = log
            .lines()
            .find(|line| {
                line.contains(&request_id)
                    && (line.contains("\"status\":200") || line.contains("status=200"))
            })
            .unwrap_or_else(|| panic!("no {format} line for request {request_id}:\n{log}"));
        if format == "json" {
            for line in log.lines() {
                let parsed: Value = serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("not JSON ({err}): {line}"));
                assert!(
                    parsed["timestamp"].is_string() && parsed["level"].is_string(),
                    "{line}"
                );
            }
            let line: Value = serde_json::from_str(request_line).expect("JSON");
            assert_eq!(line["message"], "request", "{line}");
            assert_eq!(line["request_id"], request_id.as_str(), "{line}");
            assert_eq!(line["operation"], "listPets", "{line}");
            assert_eq!(line["status"], 200, "{line}");
            assert!(line["latency_us"].is_u64(), "{line}");
            assert_eq!(line["key_id"].as_str().map(str::len), Some(32), "{line}");
            // What an operator searches by: the route template, the client, its agent, the
            // service and its version.
            assert_eq!(line["route"], "/v1/pets", "{line}");
            assert_eq!(line["client"], "127.0.0.1", "{line}");
            assert!(line["user_agent"] == "petstore-log-test/1.0", "{line}");
            assert_eq!(line["service"], "petstore", "{line}");
            assert!(line["version"].is_string(), "{line}");
            // The caller's trace continued, with a span of this service's own.
            assert_eq!(
                line["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736",
                "{line}"
            );
            assert_eq!(line["parent_span_id"], "00f067aa0ba902b7", "{line}");
            assert!(
                line["span_id"]
                    .as_str()
                    .is_some_and(|span| span.len() == 16 && span != "00f067aa0ba902b7"),
                "{line}"
            );
            // The refused key's line names the key it claimed to be.
            let refused_line: Value = log
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|line| line["status"] == 401)
                .unwrap_or_else(|| panic!("no 401 line:\n{log}"));
            assert_eq!(
                refused_line["presented_key_id"],
                petstore_test_support::claims_of(&key)["jti"],
                "{refused_line}"
            );
            assert!(refused_line["key_id"].is_null(), "{refused_line}");
            // No traceparent came with it: a trace of its own.
            assert!(
                refused_line["trace_id"].as_str().is_some_and(
                    |trace| trace.len() == 32 && trace != "4bf92f3577b34da6a3ce929d0e0e4736"
                ),
                "{refused_line}"
            );
            assert!(refused_line["parent_span_id"].is_null(), "{refused_line}");
        }
    }
}

/// The JSON log lines of a `memory:` server in a process of its own started with `env`, after
/// `exercise` sent its requests to the server's address. The server is stopped first, so that
/// every line is written.
async fn json_log_lines<Exercise>(env: &[(&str, &str)], exercise: Exercise) -> Vec<Value>
where
    Exercise: AsyncFnOnce(&str),
{
    let dir = tempfile::tempdir().expect("tempdir");
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let started = start_server_logging_to(dir.path(), "memory:", &env, Stdio::from(log));
    let mut child = started.child;
    exercise(&started.address).await;
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(terminated.success());
    assert!(child.wait().expect("reap").success());
    std::fs::read_to_string(&log_path)
        .expect("read the log")
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
        })
        .collect()
}

/// The request line of the request that sent `X-Request-Id: request_id`.
fn request_line<'a>(lines: &'a [Value], request_id: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| line["message"] == "request" && line["request_id"] == request_id)
        .unwrap_or_else(|| panic!("no line for request {request_id}: {lines:#?}"))
}

/// Behind a trusted proxy writing `X-Forwarded-For`, the log names the client it names, whatever
/// `Forwarded` header the client sent along.
#[actix_web::test]
async fn behind_a_trusted_proxy_the_log_names_the_client_the_proxy_named() {
    let lines = json_log_lines(
        &[("PETSTORE_TRUSTED_PROXIES", "127.0.0.0/8")],
        async |address: &str| {
            for (request_id, forwarded, named) in [
                ("garbage", "garbage", "203.0.113.5"),
                ("spoofed", "for=198.51.100.9", "203.0.113.6"),
            ] {
                let response = send(
                    client()
                        .get(format!("{address}/healthz"))
                        .insert_header(("X-Request-Id", request_id))
                        .insert_header(("Forwarded", forwarded))
                        .insert_header(("X-Forwarded-For", named)),
                    None,
                )
                .await;
                assert_eq!(response.status.as_u16(), 200, "{}", response.body);
            }
        },
    )
    .await;
    assert_eq!(request_line(&lines, "garbage")["client"], "203.0.113.5");
    assert_eq!(request_line(&lines, "spoofed")["client"], "203.0.113.6");
}

/// A user agent with bytes that are not printable ASCII is logged escaped, not left out.
#[actix_web::test]
async fn a_user_agent_with_other_bytes_is_logged_escaped() {
    let lines = json_log_lines(&[], async |address: &str| {
        let agent = awc::http::header::HeaderValue::from_bytes(b"caf\xc3\xa9-client/1.0\t\\x")
            .expect("obs-text and a tab are allowed in a header value");
        let response = send(
            client()
                .get(format!("{address}/healthz"))
                .insert_header(("X-Request-Id", "agent"))
                .insert_header(("User-Agent", agent)),
            None,
        )
        .await;
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    })
    .await;
    assert_eq!(
        request_line(&lines, "agent")["user_agent"],
        r"caf\xc3\xa9-client/1.0\x09\\x"
    );
}

/// SIGTERM in the middle of 64 clients creating pets: the process exits 0, every create was
/// either answered or never accepted, and every 201 is there after a restart.
async fn sigterm_under_load_loses_no_acknowledged_create(mut app: TestApp) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let acknowledged_so_far = std::sync::atomic::AtomicUsize::new(0);
    let clients = (0..64).map(|client_no| {
        let (app, acknowledged_so_far) = (&app, &acknowledged_so_far);
        async move {
            let mut acknowledged = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                n += 1;
                let body =
                    json!({"name": format!("c{client_no}-{n}"), "categoryId": 1}).to_string();
                match petstore_test_support::try_send(app.post_json("/v1/pets"), Some(body)).await {
                    Ok(response) => {
                        assert_eq!(response.status.as_u16(), 201, "{}", response.body);
                        acknowledged.push(response.json()["id"].as_i64().expect("an id"));
                        acknowledged_so_far.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    // Refused or closed: the server stopped taking requests.
                    Err(_) => break,
                }
            }
            acknowledged
        }
    });
    let load = join_all(clients);
    // SIGTERM once the load is well under way: every client has had several creates answered.
    let stop = async {
        eventually(
            deadline,
            "the load under way: 256 creates answered",
            async || match acknowledged_so_far.load(std::sync::atomic::Ordering::Relaxed) {
                under_way if under_way >= 64 * 4 => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
        app.terminate();
    };
    let (acknowledged, ()) = futures_util::future::join(load, stop).await;
    let acknowledged: BTreeSet<i64> = acknowledged.into_iter().flatten().collect();
    assert!(
        acknowledged.len() > 64,
        "the load barely ran: {}",
        acknowledged.len()
    );
    let status = app.wait_for_exit();
    assert!(status.success(), "exit status {status}");

    app.restart();
    let stored: BTreeSet<i64> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .iter()
        .map(|pet| pet["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(
        stored.difference(&acknowledged).count(),
        0,
        "pets stored without a 201"
    );
    assert_eq!(
        acknowledged
            .difference(&stored)
            .copied()
            .collect::<Vec<_>>(),
        Vec::<i64>::new(),
        "acknowledged pets missing after the restart"
    );
}

on_backends!(process [sqlite, postgres] sigterm_under_load_loses_no_acknowledged_create);
