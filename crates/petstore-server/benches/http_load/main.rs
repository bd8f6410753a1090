//! Load benchmark (`make bench`): the release `petstore` binary over real HTTP on loopback, on
//! every backend, next to a bare actix-web ceiling measured in the same run, at 1, 8, 64 and 256
//! connections. Prints one table (req/s, p50, p99, max, ratio to the ceiling), the server's RSS
//! after each backend, the targets of `docs/benchmarks.md` (the keyed share of createPet from
//! pairs of runs back to back), draws `docs/benchmarks.svg`, and writes the table, the targets
//! and the README's speed paragraph into the docs (`publish.rs`).
//!
//! Absolute figures on a shared machine move between runs; the ratio to the ceiling, measured
//! minutes apart on the same machine, is what compares across runs. Two builds are
//! compared in one paired run instead (`paired.rs`, `make bench-paired`).

mod ceiling;
#[path = "../shared/docs_blocks.rs"]
mod docs_blocks;
mod paired;
mod publish;
mod report;
mod scenarios;
mod wrk;

use std::time::Duration;

use petstore_test_support::{Backend, TestApp, SERVER_WORKERS};
use report::{Row, Subject};
use serde_json::json;

const CONNECTIONS: [usize; 4] = [1, 8, 64, 256];

/// The operations measured, in the order they run: creates first, so reads find pets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    CreatePet,
    /// createPet with an `Idempotency-Key` of its own on every request: what keeping the
    /// response with the pet costs.
    CreatePetWithKey,
    /// createPet with every catalogue field (price, description, photos, tags): what a shop's
    /// pet costs beside the spec's.
    CreatePetWithDetails,
    ListPets,
    GetPet,
    /// getPet with `If-None-Match` naming the pet's current tag: 304, no body.
    GetPetNotModified,
    /// updatePet: a rename (no `If-Match`) of pets created for it, by a `store` key.
    UpdatePet,
}

impl Operation {
    pub const ALL: [Self; 7] = [
        Self::CreatePet,
        Self::CreatePetWithKey,
        Self::CreatePetWithDetails,
        Self::ListPets,
        Self::GetPet,
        Self::GetPetNotModified,
        Self::UpdatePet,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Self::CreatePet => "createPet",
            Self::CreatePetWithKey => "createPet + Idempotency-Key",
            Self::CreatePetWithDetails => "createPet + catalogue fields",
            Self::ListPets => "listPets limit=20",
            Self::GetPet => "getPet",
            Self::GetPetNotModified => "getPet 304",
            Self::UpdatePet => "updatePet",
        }
    }

    /// The operations `BENCH_OPERATIONS` names (labels, comma-separated, e.g. `createPet,getPet`),
    /// or every one: a paired run of one change need not measure the scenarios it cannot move.
    pub fn chosen() -> Vec<Self> {
        let Ok(only) = std::env::var("BENCH_OPERATIONS") else {
            return Self::ALL.to_vec();
        };
        Self::ALL
            .into_iter()
            .filter(|operation| {
                only.split(',')
                    .any(|label| label.trim() == operation.label())
            })
            .collect()
    }
}

fn seconds_per_run() -> Duration {
    let seconds = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(5);
    Duration::from_secs(seconds)
}

/// Resident memory of a process, from `/proc/PID/status`, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn measure_ceiling(duration: Duration) -> Vec<Row> {
    let ceiling = ceiling::Ceiling::start(SERVER_WORKERS);
    let load = wrk::Load {
        method: "GET",
        url: format!("{}/v1/pets/1", ceiling.address),
        bearer: None,
        json_body: None,
        idempotency_keys: None,
        accept_encoding: None,
        header: None,
        rotation: &[],
    };
    wrk::run(&load, 64, Duration::from_secs(1)); // warm-up, not reported
    let rows = CONNECTIONS
        .iter()
        .map(|&connections| Row {
            subject: Subject::Ceiling,
            operation: Operation::GetPet,
            connections,
            measured: wrk::run(&load, connections, duration),
        })
        .collect();
    eprintln!(
        "ceiling: RSS {} KiB",
        rss_kib(ceiling.pid()).unwrap_or_default()
    );
    rows
}

/// Far above what one key can send here: the bucket is checked on every request, never empty.
const RATE_LIMIT: &str = "100000000/s";

/// How many createPet runs, plain and keyed back to back, the keyed share is the median of.
const KEYED_PAIRS: usize = 5;

async fn measure_backend(backend: Backend, duration: Duration) -> BackendRuns {
    // Production settings: per-key rate limiting on (with a limit no run reaches, so every request
    // pays for the check and none is refused), metrics recorded, JSON logs.
    let app = TestApp::builder(backend)
        .setting("PETSTORE_RATE_LIMIT", RATE_LIMIT)
        .in_a_process()
        .spawn()
        .await;
    let body = json!({"name": "Rex", "categoryId": 3, "status": "available"}).to_string();
    let mut rows = Vec::new();
    for operation in Operation::ALL {
        let Some(shape) = scenarios::prepare(&app, operation).await else {
            panic!("{backend:?}: this build answers no {}", operation.label());
        };
        let mut load = shape.load(&app, None);
        let keyed = operation == Operation::CreatePetWithKey;
        // Keys of their own per run: a key repeated from an earlier run would be a replay.
        let prefixes = ["warm-up", "1", "8", "64", "256"].map(|run| format!("bench-{run}"));
        if keyed {
            load.idempotency_keys = Some(&prefixes[0]);
        }
        wrk::run(&load, 64, Duration::from_secs(1)); // warm-up, not reported
        for (connections, run_keys) in CONNECTIONS.into_iter().zip(&prefixes[1..]) {
            // 256 connections on 256 pets queue on the same rows: on PostgreSQL, past the
            // pool's wait, some answer 503 (storage busy), which wrk counts as failures.
            if operation == Operation::UpdatePet && connections > 64 {
                continue;
            }
            if keyed {
                load.idempotency_keys = Some(run_keys);
            }
            rows.push(Row {
                subject: Subject::Petstore(backend),
                operation,
                connections,
                measured: wrk::run(&load, connections, duration),
            });
        }
    }
    // The keyed share, keyed over plain: single runs minutes apart drift with the machine, so
    // plain and keyed run back to back, in pairs, at 64
    // connections, with keys no earlier run sent. Every other pair runs keyed first: the
    // database grows with each run, and a fixed order would always give one side the larger.
    let prefixes: Vec<String> = (0..KEYED_PAIRS)
        .map(|pair| format!("bench-pair-{pair}"))
        .collect();
    let mut create = wrk::Load {
        method: "POST",
        url: app.url("/v1/pets"),
        bearer: Some(&app.api_key),
        json_body: Some(&body),
        idempotency_keys: None,
        accept_encoding: None,
        header: None,
        rotation: &[],
    };
    let mut keyed_pairs = Vec::new();
    for (pair, prefix) in prefixes.iter().enumerate() {
        let mut run = |keyed: bool| {
            create.idempotency_keys = keyed.then_some(prefix.as_str());
            wrk::run(&create, report::TARGET_CONNECTIONS, duration)
        };
        let (plain, keyed) = if pair % 2 == 0 {
            let plain = run(false);
            (plain, run(true))
        } else {
            let keyed = run(true);
            (run(false), keyed)
        };
        keyed_pairs.push(report::KeyedPair { plain, keyed });
    }
    BackendRuns {
        rows,
        keyed_pairs,
        rss_kib: rss_kib(app.server_pid()),
    }
}

/// What one backend's runs measured.
struct BackendRuns {
    rows: Vec<Row>,
    keyed_pairs: Vec<report::KeyedPair>,
    rss_kib: Option<u64>,
}

/// The client-address limit of the deployment manifests: a flood of anonymous requests from one
/// address is answered 429 past it, as in production.
const CLIENT_RATE_LIMIT: &str = "600/m,burst=60";

/// getPet at 64 connections on the memory backend, alone and then beside a flood of `/readyz`
/// from 64 more connections (a flood of health checks must not move the API's throughput). Returns both measurements and how many flood requests were answered.
async fn measure_flood(duration: Duration) -> (wrk::Measured, wrk::Measured, wrk::Measured) {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_RATE_LIMIT", RATE_LIMIT)
        .setting("PETSTORE_CLIENT_RATE_LIMIT", CLIENT_RATE_LIMIT)
        .in_a_process()
        .spawn()
        .await;
    let created = petstore_test_support::send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Rex", "categoryId": 3}).to_string()),
    )
    .await;
    assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    let get_pet = wrk::Load {
        method: "GET",
        url: app.url("/v1/pets/1"),
        bearer: Some(&app.api_key),
        json_body: None,
        idempotency_keys: None,
        accept_encoding: None,
        header: None,
        rotation: &[],
    };
    wrk::run(&get_pet, 64, Duration::from_secs(1)); // warm-up, not reported
    let alone = wrk::run(&get_pet, 64, duration);
    let flood_url = app.url("/readyz");
    let flood_duration = duration + Duration::from_secs(2);
    let flood = std::thread::spawn(move || {
        let load = wrk::Load {
            method: "GET",
            url: flood_url,
            bearer: None,
            json_body: None,
            idempotency_keys: None,
            accept_encoding: None,
            header: None,
            rotation: &[],
        };
        // Nearly every answer is a 429: counted, not an error of the run.
        wrk::run_accepting_refusals(&load, 64, flood_duration)
    });
    std::thread::sleep(Duration::from_secs(1));
    let beside = wrk::run(&get_pet, 64, duration);
    let flood = flood.join().expect("the flood ran");
    (alone, beside, flood)
}

/// Pets in the page the compression scenario lists: the largest page a client can ask for.
const LARGE_PAGE: usize = 100;

/// listPets of a full page (100 pets) on the memory backend at 64 connections, by a client
/// that does not ask for compression and by one that asks for gzip, and the bytes of
/// one page each way.
async fn measure_compression(duration: Duration) -> report::Compression {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_RATE_LIMIT", RATE_LIMIT)
        .in_a_process()
        .spawn()
        .await;
    for n in 0..LARGE_PAGE {
        app.create_pet(json!({"name": format!("Rex {n}"), "categoryId": 3, "status": "available"}))
            .await;
    }
    let path = format!("/v1/pets?limit={LARGE_PAGE}");
    let page_bytes = |accept_encoding: Option<&'static str>| {
        let request = app.get(&path);
        let request = match accept_encoding {
            Some(codings) => request.insert_header(("Accept-Encoding", codings)),
            None => request,
        };
        async move {
            let mut response = request.send().await.expect("listPets answered");
            assert_eq!(response.status().as_u16(), 200);
            let encoded = response.headers().get("content-encoding").is_some();
            assert_eq!(encoded, accept_encoding.is_some(), "{accept_encoding:?}");
            response.body().limit(1 << 20).await.expect("a page").len()
        }
    };
    let (plain_bytes, gzip_bytes) = (page_bytes(None).await, page_bytes(Some("gzip")).await);
    let mut load = wrk::Load {
        method: "GET",
        url: app.url(&path),
        bearer: Some(&app.api_key),
        json_body: None,
        idempotency_keys: None,
        accept_encoding: None,
        header: None,
        rotation: &[],
    };
    wrk::run(&load, 64, Duration::from_secs(1)); // warm-up, not reported
    let plain = wrk::run(&load, 64, duration);
    load.accept_encoding = Some("gzip");
    let gzip = wrk::run(&load, 64, duration);
    report::Compression {
        pets: LARGE_PAGE,
        plain,
        gzip,
        plain_bytes,
        gzip_bytes,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some(first) = args.next() {
        if first == ceiling::SERVE_FLAG {
            let workers = args.next().and_then(|n| n.parse().ok()).unwrap_or(2);
            if let Err(error) = ceiling::serve(workers) {
                eprintln!("ceiling server failed: {error}");
                std::process::exit(1);
            }
            return;
        }
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run only when asked.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let mut backends = vec![Backend::Memory, Backend::Sqlite];
    if std::env::var_os("TEST_DATABASE_URL").is_some() {
        backends.push(Backend::Postgres);
    } else {
        eprintln!("TEST_DATABASE_URL unset: skipping PostgreSQL (run `make bench` to include it)");
    }
    // `BENCH_BACKENDS=postgres` (or `memory,sqlite`, ...): only these backends.
    if let Ok(only) = std::env::var("BENCH_BACKENDS") {
        backends.retain(|backend| {
            only.split(',')
                .any(|name| name.trim().eq_ignore_ascii_case(&format!("{backend:?}")))
        });
    }
    let duration = seconds_per_run();
    if let Some(builds) = paired::Builds::from_env() {
        actix_web::rt::System::new().block_on(paired::run(&builds, &backends, duration));
        return;
    }
    eprintln!(
        "wrk, {}s per run, connections {CONNECTIONS:?}, {SERVER_WORKERS} server workers",
        duration.as_secs()
    );

    let mut rows = measure_ceiling(duration);
    let mut rss = Vec::new();
    let mut keyed_pairs = Vec::new();
    actix_web::rt::System::new().block_on(async {
        for backend in backends {
            eprintln!("measuring {backend:?} ...");
            let measured = measure_backend(backend, duration).await;
            rows.extend(measured.rows);
            keyed_pairs.push((backend, measured.keyed_pairs));
            rss.push((backend, measured.rss_kib));
        }
    });

    let (alone, beside, flood) = actix_web::rt::System::new().block_on(measure_flood(duration));
    let compression = actix_web::rt::System::new().block_on(measure_compression(duration));

    let report = report::Report::new(rows, keyed_pairs, rss);
    print!("{}", report.table());
    print!("{}", report.targets());
    let beside = format!("{}{compression}", report::flood(&alone, &beside, &flood));
    print!("{beside}");
    let picture = docs_blocks::repository_file("docs/benchmarks.svg");
    match report.draw(&picture) {
        Ok(()) => println!("\npicture: docs/benchmarks.svg"),
        Err(error) => eprintln!("could not draw {}: {error}", picture.display()),
    }
    publish::publish(&report, &beside);
}
