//! PostgreSQL stopped and started under 64 clients: once the outage is known every request
//! answers 503 at once, `/readyz` says so within a second without asking the database, and the
//! same process serves again within a second of the server being back.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use petstore_test_support::ClusterControl;
use serde_json::json;

use petstore_test_support::{eventually, try_send, Backend, TestApp};

const CLIENTS: usize = 64;

#[derive(Default)]
struct Seen {
    /// Latency of each 503.
    unavailable: Vec<Duration>,
    errors: Vec<String>,
    last_ok: Option<Instant>,
}

async fn client_loop(app: &TestApp, n: usize, stop: &Cell<bool>, seen: &RefCell<Seen>) {
    let body = json!({"name": "Rex", "categoryId": 1}).to_string();
    while !stop.get() {
        let started = Instant::now();
        let response = if n % 4 == 0 {
            try_send(app.post_json("/v1/pets"), Some(body.clone())).await
        } else {
            try_send(app.get("/v1/pets"), None).await
        };
        let elapsed = started.elapsed();
        {
            let mut seen = seen.borrow_mut();
            match response {
                Ok(response) => match response.status.as_u16() {
                    200 | 201 => seen.last_ok = Some(Instant::now()),
                    503 => seen.unavailable.push(elapsed),
                    other => seen.errors.push(format!("{other}: {}", response.body)),
                },
                Err(error) => seen.errors.push(error),
            }
        }
        if elapsed < Duration::from_millis(2) {
            // A client told to retry later does not spin.
            actix_web::rt::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

async fn readyz(app: &TestApp) -> u16 {
    let started = Instant::now();
    let response = try_send(app.client.get(app.url("/readyz")), None)
        .await
        .expect("readyz answers");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "/readyz took {:?}",
        started.elapsed()
    );
    response.status.as_u16()
}

#[actix_web::test]
async fn under_load_a_stopped_postgres_gets_fast_503s_and_recovery_within_a_second() {
    let cluster = ClusterControl::acquire();
    let app = TestApp::spawn_process(Backend::Postgres).await;
    let stop = Cell::new(false);
    let seen = RefCell::new(Seen::default());
    let load = join_all((0..CLIENTS).map(|n| client_loop(&app, n, &stop, &seen)));
    let scenario = async {
        actix_web::rt::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(readyz(&app).await, 200);
        let stopped = cluster.stop();
        eventually(
            Duration::from_secs(3),
            "/readyz 503 with PostgreSQL down",
            async || match readyz(&app).await {
                503 => Ok(()),
                other => Err(other),
            },
        )
        .await;
        // A flood of readiness checks while the database is down: each answers at once, none
        // waits for the database.
        for _ in 0..200 {
            assert_eq!(readyz(&app).await, 503);
        }
        actix_web::rt::time::sleep(Duration::from_secs(1)).await;
        stopped.start();
        let back = Instant::now();
        eventually(
            back + Duration::from_secs(1),
            "a 200 within a second of PostgreSQL being back",
            async || {
                let seen = seen.borrow();
                if seen.last_ok.is_some_and(|ok| ok > back) {
                    Ok(())
                } else {
                    Err(format!("{} answered 503 so far", seen.unavailable.len()))
                }
            },
        )
        .await;
        eprintln!(
            "served again {:?} after PostgreSQL was back",
            back.elapsed()
        );
        assert_eq!(readyz(&app).await, 200);
        stop.set(true);
    };
    futures_util::future::join(load, scenario).await;
    let seen = seen.into_inner();
    assert!(seen.errors.is_empty(), "not 2xx or 503: {:?}", seen.errors);
    let mut latencies = seen.unavailable;
    assert!(latencies.len() > 100, "only {} 503s", latencies.len());
    latencies.sort();
    let p99 = latencies[latencies.len() * 99 / 100];
    eprintln!(
        "{} 503s, p99 {p99:?}, max {:?}",
        latencies.len(),
        latencies.last()
    );
    assert!(p99 < Duration::from_millis(250), "p99 of the 503s: {p99:?}");
}
