//! Webhook delivery benchmark (`make bench`, after the load benchmark): the release `petstore`
//! binary on SQLite and PostgreSQL delivering `pet.created` to one endpoint, a fast HTTPS
//! receiver on loopback that answers 204 at once. Measures two things on one server:
//!
//! - createPet at 64 connections with the endpoint subscribed (deliveries running beside the
//!   API) and with no endpoint, back to back in pairs, every other pair in the other order: the
//!   rate's ratio per pair, p99 and max of each side;
//! - the deliveries a second while a backlog drains: a createPet load makes the events, then
//!   the deliveries still pending are timed until none is left (or the drain window ends).
//!
//! Deliveries are counted from the server's own `petstore_webhook_deliveries_total` metric.
//! Prints a table and writes it into `docs/benchmarks.md` (`publish.rs`).

// The load benchmark's wrk driver, shared as it is; this benchmark uses part of it.
#[allow(dead_code)]
#[path = "../http_load/wrk.rs"]
mod wrk;

mod publish;
mod report;

use std::time::{Duration, Instant};

use awc::http::Method;
use petstore_test_support::webhook_receiver::WebhookReceiver;
use petstore_test_support::{client, send, Backend, TestApp, TestResponse};
use serde_json::{json, Value};

use report::{BackendFigures, Drain, Pair};

/// The connections of the createPet load: the targets' figure of `docs/benchmarks.md`.
const CONNECTIONS: usize = 64;

/// Far above what one key can send here: the bucket is checked on every request, never empty.
const RATE_LIMIT: &str = "100000000/s";

/// How often the drain looks at the server's delivery count.
const POLL: Duration = Duration::from_millis(100);

fn seconds_from_env(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default),
    )
}

fn pairs_from_env() -> usize {
    std::env::var("BENCH_WEBHOOK_PAIRS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&pairs| pairs >= 1)
        .unwrap_or(3)
}

/// A server of `backend` that may deliver to `receiver` on loopback and trusts its CA.
async fn spawn(backend: Backend, receiver: &WebhookReceiver) -> TestApp {
    TestApp::builder(backend)
        .setting("PETSTORE_RATE_LIMIT", RATE_LIMIT)
        .setting("PETSTORE_WEBHOOK_ALLOW_LOOPBACK", "true")
        .setting(
            "PETSTORE_WEBHOOK_CA_FILE",
            receiver.ca_pem_path().to_str().expect("a UTF-8 path"),
        )
        .in_a_process()
        .spawn()
        .await
}

async fn call(
    app: &TestApp,
    method: Method,
    key: &str,
    path: &str,
    body: Option<Value>,
) -> TestResponse {
    let request = app.client.request(method, app.url(path)).bearer_auth(key);
    match body {
        Some(body) => {
            let request = request.insert_header(("Content-Type", "application/json"));
            send(request, Some(body.to_string())).await
        }
        None => send(request, None).await,
    }
}

/// Registers an endpoint at `receiver` for `pet.created`; its id.
async fn subscribe(app: &TestApp, staff: &str, receiver: &WebhookReceiver) -> i64 {
    let created = call(
        app,
        Method::POST,
        staff,
        "/v1/webhook-endpoints",
        Some(json!({"url": receiver.url("/hooks"), "eventTypes": ["pet.created"]})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.json()["id"].as_i64().expect("an endpoint id")
}

/// Deletes the endpoint and, with it, its deliveries not yet made.
async fn unsubscribe(app: &TestApp, staff: &str, endpoint: i64) {
    let path = format!("/v1/webhook-endpoints/{endpoint}");
    let deleted = call(app, Method::DELETE, staff, &path, None).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
}

/// The server's count of deliveries that succeeded, from `/metrics`.
async fn delivered(app: &TestApp) -> u64 {
    let metrics = send(client().get(app.url("/metrics")), None).await;
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    metrics
        .body
        .lines()
        .filter(|line| {
            line.starts_with("petstore_webhook_deliveries_total{")
                && line.contains("outcome=\"succeeded\"")
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// The createPet load: the spec's pet, a new one per request.
fn create_load<'a>(app: &'a TestApp, body: &'a str) -> wrk::Load<'a> {
    wrk::Load {
        method: "POST",
        url: app.url("/v1/pets"),
        bearer: Some(&app.api_key),
        json_body: Some(body),
        idempotency_keys: None,
        accept_encoding: None,
        header: None,
        rotation: &[],
    }
}

/// createPet with an endpoint subscribed: the run and the deliveries made during it.
async fn run_subscribed(
    app: &TestApp,
    staff: &str,
    receiver: &WebhookReceiver,
    load: &wrk::Load<'_>,
    duration: Duration,
) -> (wrk::Measured, u64) {
    let endpoint = subscribe(app, staff, receiver).await;
    let before = delivered(app).await;
    let measured = wrk::run(load, CONNECTIONS, duration);
    let during = delivered(app).await - before;
    unsubscribe(app, staff, endpoint).await;
    (measured, during)
}

/// Makes a backlog with a createPet load and times its drain, for at most `window`.
async fn drain(
    app: &TestApp,
    staff: &str,
    receiver: &WebhookReceiver,
    load: &wrk::Load<'_>,
    duration: Duration,
    window: Duration,
) -> Drain {
    let endpoint = subscribe(app, staff, receiver).await;
    let before = delivered(app).await;
    let made = wrk::run(load, CONNECTIONS, duration);
    let events = made.requests;
    let at_load_end = delivered(app).await - before;
    let started = Instant::now();
    let mut now_delivered = at_load_end;
    while now_delivered < events && started.elapsed() < window {
        actix_web::rt::time::sleep(POLL).await;
        now_delivered = delivered(app).await - before;
    }
    let seconds = started.elapsed().as_secs_f64();
    unsubscribe(app, staff, endpoint).await;
    Drain {
        events,
        load_seconds: made.seconds,
        delivered_during_load: at_load_end,
        backlog: events.saturating_sub(at_load_end),
        drained: now_delivered - at_load_end,
        seconds,
    }
}

async fn measure(
    backend: Backend,
    duration: Duration,
    pairs: usize,
    window: Duration,
) -> BackendFigures {
    let receiver = WebhookReceiver::start();
    let app = spawn(backend, &receiver).await;
    let staff = app.staff_key().await;
    let body = json!({"name": "Rex", "categoryId": 3, "status": "available"}).to_string();
    let load = create_load(&app, &body);
    wrk::run(&load, CONNECTIONS, Duration::from_secs(1)); // warm-up, not reported
    let mut measured = Vec::new();
    // The database grows with every run: every other pair runs subscribed first, so that
    // neither side always gets the larger one.
    for pair in 0..pairs {
        let (alone, subscribed) = if pair % 2 == 0 {
            let alone = wrk::run(&load, CONNECTIONS, duration);
            (
                alone,
                run_subscribed(&app, &staff, &receiver, &load, duration).await,
            )
        } else {
            let subscribed = run_subscribed(&app, &staff, &receiver, &load, duration).await;
            (wrk::run(&load, CONNECTIONS, duration), subscribed)
        };
        measured.push(Pair {
            alone,
            subscribed: subscribed.0,
            delivered_during: subscribed.1,
        });
    }
    let drain = drain(&app, &staff, &receiver, &load, duration, window).await;
    BackendFigures {
        backend,
        pairs: measured,
        drain,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run only when asked.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let mut backends = vec![Backend::Sqlite];
    if std::env::var_os("TEST_DATABASE_URL").is_some() {
        backends.push(Backend::Postgres);
    } else {
        eprintln!("TEST_DATABASE_URL unset: skipping PostgreSQL (run `make bench` to include it)");
    }
    // `BENCH_BACKENDS=postgres` (or `sqlite`): only these backends.
    if let Ok(only) = std::env::var("BENCH_BACKENDS") {
        backends.retain(|backend| {
            only.split(',')
                .any(|name| name.trim().eq_ignore_ascii_case(&format!("{backend:?}")))
        });
    }
    let duration = seconds_from_env("BENCH_SECONDS", 5);
    let window = seconds_from_env("BENCH_DRAIN_SECONDS", 8 * duration.as_secs());
    let pairs = pairs_from_env();
    eprintln!(
        "webhooks: wrk createPet at {CONNECTIONS} connections, {}s per run, {pairs} pairs, \
         drain window {}s",
        duration.as_secs(),
        window.as_secs()
    );
    let figures: Vec<BackendFigures> = backends
        .into_iter()
        .map(|backend| {
            eprintln!("measuring webhook deliveries on {backend:?} ...");
            actix_web::rt::System::new().block_on(measure(backend, duration, pairs, window))
        })
        .collect();
    let table = report::table(&figures);
    print!("{table}");
    publish::publish(&table);
}
