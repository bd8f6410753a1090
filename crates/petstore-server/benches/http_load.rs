//! Load benchmark: the release `petstore` binary over real HTTP on loopback, for each backend.
//! Reports throughput and latency percentiles per operation. Run with `make bench` (which also
//! starts a throwaway PostgreSQL); the figures we measured are in `docs/benchmarks.md`.

#[path = "../../../tests/api/helpers.rs"]
mod helpers;

use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use helpers::{send, Backend, TestApp};
use serde_json::json;

const CONCURRENCY: usize = 32;
const CREATES: usize = 2_000;
const READS: usize = 5_000;

struct Figures {
    operation: &'static str,
    requests: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[index]
    }

    fn print(&self, backend: Backend) {
        println!(
            "| {:<8} | {:<22} | {:>6} | {:>9.0} | {:>8.2} | {:>8.2} | {:>8.2} |",
            format!("{backend:?}"),
            self.operation,
            self.requests,
            self.requests as f64 / self.elapsed.as_secs_f64(),
            ms(self.percentile(0.50)),
            ms(self.percentile(0.99)),
            ms(self.percentile(1.0)),
        );
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// Sends `count` requests made by `request(n)` with `CONCURRENCY` in flight; every one must
/// answer `expected`, or the figures would be measuring errors.
async fn measure<F>(operation: &'static str, count: usize, expected: u16, request: F) -> Figures
where
    F: Fn(usize) -> (awc::ClientRequest, Option<String>),
{
    let started = Instant::now();
    let latencies: Vec<Duration> = stream::iter(0..count)
        .map(|n| {
            let (req, body) = request(n);
            async move {
                let sent = Instant::now();
                let response = send(req, body).await;
                assert_eq!(response.status.as_u16(), expected, "{}", response.body);
                sent.elapsed()
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    Figures {
        operation,
        requests: count,
        elapsed: started.elapsed(),
        latencies,
    }
}

async fn bench(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let creates = measure("createPet", CREATES, 201, |n| {
        let body = json!({"name": format!("pet {n}"), "categoryId": 1 + n % 7}).to_string();
        (app.post_json("/v1/pets"), Some(body))
    })
    .await;
    let lists = measure("listPets limit=20", READS, 200, |_| {
        (app.get("/v1/pets?limit=20"), None)
    })
    .await;
    let filtered = measure("listPets status, limit=100", READS, 200, |_| {
        (app.get("/v1/pets?status=available&limit=100"), None)
    })
    .await;
    let gets = measure("getPet", READS, 200, |n| {
        (app.get(&format!("/v1/pets/{}", 1 + n % CREATES)), None)
    })
    .await;
    for figures in [creates, lists, filtered, gets] {
        figures.print(backend);
    }
}

fn main() {
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
    println!(
        "{CONCURRENCY} requests in flight, HTTP/1.1 keep-alive over loopback, release build\n"
    );
    println!("| backend  | operation              | reqs   | req/s     | p50 ms   | p99 ms   | max ms   |");
    println!("|----------|------------------------|--------|-----------|----------|----------|----------|");
    actix_web::rt::System::new().block_on(async {
        for backend in backends {
            bench(backend).await;
        }
    });
}
