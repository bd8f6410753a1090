//! Webhook delivery benchmark (`make bench`, after the load benchmark): the release `petstore`
//! binary on SQLite and PostgreSQL delivering `pet.created` to one endpoint, a fast HTTPS
//! receiver on loopback that answers 204 at once. Measures two things on one server:
//!
//! - createPet at 64 connections with the endpoint subscribed (deliveries running beside the
//!   API) and with no endpoint, back to back in pairs, every other pair in the other order: the
//!   rate's ratio per pair, p99 and max of each side;
//! - the deliveries a second while a backlog drains: creates, 64 at a time, make the events,
//!   then the deliveries still pending are timed until none is left (or the drain window ends).
//!
//! Deliveries are counted from the server's own `petstore_webhook_deliveries_total` metric.
//! Prints a table and writes it into `docs/benchmarks.md` (`publish.rs`).

// The load benchmark's wrk driver, shared as it is; this benchmark uses part of it.
#[allow(dead_code)]
#[path = "../http_load/wrk.rs"]
mod wrk;

#[path = "../shared/docs_blocks.rs"]
mod docs_blocks;
mod publish;
mod report;

use std::time::{Duration, Instant};

use awc::http::Method;
use futures_util::stream::{self, StreamExt};
use petstore_test_support::webhook_receiver::WebhookReceiver;
use petstore_test_support::{client, send, Backend, TestApp, TestResponse};
use serde_json::{json, Value};

use report::{BackendFigures, Drain, Pair};

/// The connections of the createPet load: the targets' figure of `docs/benchmarks.md`.
pub const CONNECTIONS: usize = 64;

/// Far above what one key can send here: the bucket is checked on every request, never empty.
const RATE_LIMIT: &str = "100000000/s";

/// How often the drain looks at the server's delivery count.
const POLL: Duration = Duration::from_millis(100);

/// No attempt for this long after an endpoint's deletion: the worker has none left in hand (it
/// looks for work at least every 200 ms).
const QUIET: Duration = Duration::from_millis(500);
/// How long the attempts claimed before a deletion may take to end.
const QUIET_WITHIN: Duration = Duration::from_secs(30);

fn seconds_from_env(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default),
    )
}

/// A positive count from the environment variable `name`, else `default`.
fn number_from_env<T: std::str::FromStr + Default + PartialOrd>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|number| *number > T::default())
        .unwrap_or(default)
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
    // A client of its own: a connection the app's client kept through a wrk run has been closed
    // by the server's keep-alive timeout.
    let request = client().request(method, app.url(path)).bearer_auth(key);
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

/// Deletes the endpoint and, with it, its deliveries not yet made, then waits for the attempts
/// already claimed to end, so that none of them falls in the next run.
async fn unsubscribe(app: &TestApp, staff: &str, endpoint: i64) {
    let path = format!("/v1/webhook-endpoints/{endpoint}");
    let deleted = call(app, Method::DELETE, staff, &path, None).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let deadline = Instant::now() + QUIET_WITHIN;
    let mut seen = Delivered::now(app).await;
    loop {
        actix_web::rt::time::sleep(QUIET).await;
        let now = Delivered::now(app).await;
        if now.attempts == seen.attempts {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "attempts went on {QUIET_WITHIN:?} after their endpoint was deleted"
        );
        seen = now;
    }
}

/// What the server's `/metrics` says of its deliveries so far.
#[derive(Debug, Clone, Copy)]
struct Delivered {
    /// Deliveries that succeeded.
    succeeded: u64,
    /// Attempts made, and their time to the answer's head, summed.
    attempts: u64,
    attempt_seconds: f64,
}

impl Delivered {
    async fn now(app: &TestApp) -> Self {
        let metrics = send(client().get(app.url("/metrics")), None).await;
        assert_eq!(metrics.status, 200, "{}", metrics.body);
        let sum = |name: &str, label: &str| {
            metrics
                .body
                .lines()
                .filter(|line| {
                    line.strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with([' ', '{']))
                        && line.contains(label)
                })
                .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>()
        };
        Self {
            succeeded: sum("petstore_webhook_deliveries_total", "outcome=\"succeeded\"") as u64,
            attempts: sum("petstore_webhook_attempt_duration_seconds_count", "") as u64,
            attempt_seconds: sum("petstore_webhook_attempt_duration_seconds_sum", ""),
        }
    }

    /// Deliveries that succeeded since `earlier`.
    fn since(&self, earlier: &Self) -> u64 {
        self.succeeded - earlier.succeeded
    }

    /// The mean time to an answer's head of the attempts since `earlier`.
    fn mean_attempt_since(&self, earlier: &Self) -> Option<Duration> {
        let attempts = self.attempts.checked_sub(earlier.attempts)?;
        (attempts > 0).then(|| {
            Duration::from_secs_f64(
                (self.attempt_seconds - earlier.attempt_seconds) / attempts as f64,
            )
        })
    }
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
    let before = Delivered::now(app).await;
    let measured = wrk::run(load, CONNECTIONS, duration);
    let during = Delivered::now(app).await.since(&before);
    unsubscribe(app, staff, endpoint).await;
    (measured, during)
}

/// Creates `count` pets, [`CONNECTIONS`] at a time; how long it took.
async fn create_pets(app: &TestApp, body: &str, count: u64) -> Duration {
    let creator = client();
    let started = Instant::now();
    stream::iter(0..count)
        .map(|_| async {
            let request = creator
                .post(app.url("/v1/pets"))
                .bearer_auth(&app.api_key)
                .insert_header(("Content-Type", "application/json"));
            let created = send(request, Some(body.to_owned())).await;
            assert_eq!(created.status, 201, "{}", created.body);
        })
        .buffer_unordered(CONNECTIONS)
        .collect::<()>()
        .await;
    started.elapsed()
}

/// Makes a backlog of `events` with a createPet load and times its drain, for at most
/// `window`.
async fn drain(
    app: &TestApp,
    staff: &str,
    receiver: &WebhookReceiver,
    events: u64,
    window: Duration,
) -> Drain {
    let body = json!({"name": "Rex", "categoryId": 3, "status": "available"}).to_string();
    let endpoint = subscribe(app, staff, receiver).await;
    let before = Delivered::now(app).await;
    let load = create_pets(app, &body, events).await;
    let at_load_end = Delivered::now(app).await;
    let started = Instant::now();
    let mut now = at_load_end;
    while now.since(&before) < events && started.elapsed() < window {
        actix_web::rt::time::sleep(POLL).await;
        now = Delivered::now(app).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    unsubscribe(app, staff, endpoint).await;
    let delivered_during_load = at_load_end.since(&before);
    Drain {
        events,
        load_seconds: load.as_secs_f64(),
        delivered_during_load,
        backlog: events.saturating_sub(delivered_during_load),
        drained: now.since(&at_load_end),
        seconds,
        mean_attempt: now.mean_attempt_since(&at_load_end),
    }
}

async fn measure(
    backend: Backend,
    duration: Duration,
    pairs: usize,
    (events, window): (u64, Duration),
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
    let drain = drain(&app, &staff, &receiver, events, window).await;
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
    let pairs = number_from_env("BENCH_WEBHOOK_PAIRS", 3);
    let events = number_from_env("BENCH_WEBHOOK_EVENTS", 10_000);
    eprintln!(
        "webhooks: wrk createPet at {CONNECTIONS} connections, {}s per run, {pairs} pairs; \
         a backlog of {events} events, drain window {}s",
        duration.as_secs(),
        window.as_secs()
    );
    let figures: Vec<BackendFigures> = backends
        .into_iter()
        .map(|backend| {
            eprintln!("measuring webhook deliveries on {backend:?} ...");
            actix_web::rt::System::new().block_on(measure(
                backend,
                duration,
                pairs,
                (events, window),
            ))
        })
        .collect();
    let table = report::table(&figures);
    print!("{table}");
    publish::publish(&table);
}
