//! Rolling restarts that fail no request (`make rollout-test`): three instances on one
//! PostgreSQL behind HAProxy (health checks on `/readyz`), 64 clients of mixed load (creates,
//! cursor-paged lists, gets, renames by PATCH, orders placed and approved, removals by DELETE),
//! and the instances restarted one after another with SIGTERM while the load runs, three full
//! rollouts. Every request must succeed (no 5xx, no connection error), every 201 must be stored
//! unless its pet was removed, and a cursor issued by one instance must be accepted by the
//! others.

mod haproxy;
mod load;

use std::cell::Cell;
use std::collections::HashSet;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use haproxy::{Haproxy, CHECK_INTERVAL};
use load::{client_loop, Tally};
use petstore_test_support::{
    client, eventually, issue_key, next_link_target, petstore, send, TestDatabase,
};
use tempfile::TempDir;

const INSTANCES: usize = 3;
const CLIENTS: usize = 64;
const ROLLOUTS: usize = 3;
const SECRET: &str = "rollout-test-key-secret-of-at-least-32-bytes-0123";
/// Long enough for HAProxy to see the 503 (one check every 200 ms, one failure suffices).
const DRAIN_DELAY: &str = "1s";

/// One `petstore serve` on a fixed port, so it comes back where HAProxy expects it.
struct Instance {
    port: u16,
    data_dir: TempDir,
    process: Child,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

fn settings(database_url: &str) -> Vec<(String, String)> {
    [
        ("DATABASE_URL", database_url),
        ("PETSTORE_KEY_SECRET", SECRET),
        ("PETSTORE_DRAIN_DELAY", DRAIN_DELAY),
        ("PETSTORE_SHUTDOWN_TIMEOUT", "10s"),
        // All the clients share one key, and each has an order open between placing and
        // approving it: more than the default bound of 10 open orders per key.
        ("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "1000"),
    ]
    .map(|(name, value)| (name.to_owned(), value.to_owned()))
    .to_vec()
}

impl Instance {
    fn start(port: u16, data_dir: TempDir, database_url: &str) -> Self {
        let log = if std::env::var_os("TEST_LOG").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let process = petstore(data_dir.path(), &settings(database_url))
            .args(["serve", "--workers", "1", "--bind"])
            .arg(format!("127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start petstore serve");
        Self {
            port,
            data_dir,
            process,
        }
    }

    fn address(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGTERM, then waits (without blocking the clients' runtime) for exit 0.
    async fn stop(&mut self) -> Duration {
        let signalled = Instant::now();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &self.process.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        let status = eventually(
            signalled + Duration::from_secs(20),
            &format!("the instance on {} to exit", self.port),
            async || match self.process.try_wait().expect("the instance's status") {
                Some(status) => Ok(status),
                None => Err("still running"),
            },
        )
        .await;
        assert!(
            status.success(),
            "instance on {} exited {status}",
            self.port
        );
        signalled.elapsed()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Every pet, read through `base` along the `next` links.
async fn every_pet(base: &str, key: &str) -> Vec<i64> {
    let mut ids = Vec::new();
    let mut next = Some("/v1/pets?limit=100".to_owned());
    while let Some(path) = next.take() {
        let response = send(client().get(format!("{base}{path}")).bearer_auth(key), None).await;
        assert_eq!(response.status, 200, "{}", response.body);
        next = response.header("link").map(next_link_target);
        ids.extend(
            response
                .json()
                .as_array()
                .expect("an array")
                .iter()
                .map(|pet| pet["id"].as_i64().expect("an id")),
        );
    }
    ids
}

/// A cursor issued by `issuer` is followed on `follower`.
async fn cursor_crosses_instances(issuer: &Instance, follower: &Instance, key: &str) {
    let first = send(
        client()
            .get(format!("{}/v1/pets?limit=2", issuer.address()))
            .bearer_auth(key),
        None,
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let next = next_link_target(first.header("link").expect("more than two pets"));
    let followed = send(
        client()
            .get(format!("{}{next}", follower.address()))
            .bearer_auth(key),
        None,
    )
    .await;
    assert_eq!(followed.status, 200, "{}", followed.body);
}

#[actix_web::test]
async fn three_rolling_restarts_under_load_fail_no_request_and_lose_no_write() {
    let database = TestDatabase::migrated(|url| {
        let url = url.parse().expect("a PostgreSQL URL");
        petstore_persistence::migrate(&url, &petstore_persistence::PoolSettings::default())
            .expect("migrate the template database");
    });
    let url = database.url().to_owned();
    let ports: Vec<u16> = (0..INSTANCES).map(|_| free_port()).collect();
    let mut instances: Vec<Instance> = ports
        .iter()
        .map(|&port| Instance::start(port, tempfile::tempdir().expect("a directory"), &url))
        .collect();
    let key = issue_key(
        instances[0].data_dir.path(),
        &settings(&url),
        // `store`: the clients approve their orders.
        &["--name", "rollout", "--scope", "store"],
    );
    let balancer = Haproxy::start(free_port(), free_port(), &ports);
    for n in 0..INSTANCES {
        balancer.wait_until(n, true, Duration::from_secs(30)).await;
    }

    let stop = Cell::new(false);
    let tally = Tally::default();
    let load = futures_util::future::join_all(
        (0..CLIENTS).map(|n| client_loop(&balancer.address, &key, n, &stop, &tally)),
    );
    let answered = async |count: usize| {
        eventually(
            Duration::from_secs(60),
            &format!("{count} requests answered"),
            async || match tally.requests() {
                enough if enough >= count => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
    };
    let rollouts = async {
        let started = Instant::now();
        // Some load before the first restart, so that every kind of request is in flight.
        answered(2_000).await;
        let mut stops = Vec::new();
        for _ in 0..ROLLOUTS {
            for n in 0..INSTANCES {
                stops.push(instances[n].stop().await);
                let data_dir = std::mem::replace(
                    &mut instances[n].data_dir,
                    tempfile::tempdir().expect("a directory"),
                );
                instances[n] = Instance::start(ports[n], data_dir, &url);
                // The next instance stops only once this one is back in rotation.
                balancer.wait_until(n, true, Duration::from_secs(30)).await;
            }
            for n in 0..INSTANCES {
                let follower = &instances[(n + 1) % INSTANCES];
                cursor_crosses_instances(&instances[n], follower, &key).await;
            }
        }
        // Load after the last rollout too, on the new instances.
        answered(tally.requests() + 1_000).await;
        stop.set(true);
        (started.elapsed(), stops)
    };
    let ((), (elapsed, stops)) = futures_util::future::join(
        async {
            load.await;
        },
        rollouts,
    )
    .await;

    let longest_stop = stops.iter().max().expect("stops");
    println!(
        "rollout: {} requests by {CLIENTS} clients in {elapsed:.1?} ({} creates, {} lists with \
         their next page, {} gets, {} renames, {} orders placed and approved, {} removals), \
         {ROLLOUTS} rollouts of {INSTANCES} instances ({} SIGTERMs, longest stop \
         {longest_stop:.1?}, health checks every {CHECK_INTERVAL:?}), {} failed",
        tally.requests(),
        tally.creates(),
        tally.lists(),
        tally.gets(),
        tally.updates(),
        tally.orders(),
        tally.removals(),
        stops.len(),
        tally.failures().len()
    );
    assert_eq!(
        tally.failures(),
        Vec::<String>::new(),
        "requests failed during the rollouts"
    );
    let mut stored = every_pet(&balancer.address, &key).await;
    stored.sort_unstable();
    let removed: HashSet<i64> = tally.removed_ids().into_iter().collect();
    let mut acknowledged: Vec<i64> = tally
        .created_ids()
        .into_iter()
        .filter(|id| !removed.contains(id))
        .collect();
    acknowledged.sort_unstable();
    assert_eq!(
        stored, acknowledged,
        "the pets stored are not exactly the pets answered 201 and not removed"
    );
}
