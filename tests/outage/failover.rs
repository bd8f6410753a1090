//! Failover to a streaming standby, the way `docs/deployment.md` recommends running behind a
//! primary and its standby: a synchronous standby (`synchronous_standby_names`,
//! `synchronous_commit=on`), and a multi-host `DATABASE_URL` with
//! `target_session_attrs=read-write`. Under clients creating pets with `Idempotency-Key`s (and
//! retrying the same key after a 503, as a careful client does), the primary is stopped hard and
//! the standby promoted: creates succeed again within seconds of the promotion, every pet
//! acknowledged with a 201 is on the promoted server, and no key stored two pets.
//!
//! The clusters are this test's own (not the suite's cluster): a primary and its standby started
//! from the PostgreSQL binaries on the machine, removed on drop.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use petstore_test_support::database::PostgresCluster;
use petstore_test_support::{
    client, eventually, eventually_blocking, issue_key, run_petstore, start_server, try_send,
    TestResponse,
};
use serde_json::{json, Value};

const CLIENTS: usize = 16;

/// Creates succeed again this soon after the promotion began, or the test fails.
const FAILOVER_BOUND: Duration = Duration::from_secs(5);

/// How long a client waits before retrying after a 503. The service says `Retry-After: 1`; a
/// shorter pause lets the test see how soon after the promotion creates succeed.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// The `petstore serve` process, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A create the service acknowledged: when, and what it answered.
struct Acknowledged {
    at: Instant,
    body: String,
}

#[derive(Default)]
struct Seen {
    acknowledged: BTreeMap<String, Acknowledged>,
    /// Answers that told the client to retry (503), and requests that got no answer.
    retried: usize,
    unexpected: Vec<String>,
}

/// What a client does after an answer.
enum Then {
    NextKey,
    Retry,
    GiveUp,
}

struct Load<'a> {
    address: &'a str,
    key: &'a str,
    stop: Cell<bool>,
    seen: RefCell<Seen>,
}

impl Load<'_> {
    fn body(pet_key: &str) -> String {
        json!({"name": pet_key, "categoryId": 1}).to_string()
    }

    async fn create(&self, pet_key: &str) -> Result<TestResponse, String> {
        let request = client()
            .post(format!("{}/v1/pets", self.address))
            .bearer_auth(self.key)
            .insert_header(("Content-Type", "application/json"))
            .insert_header(("Idempotency-Key", pet_key));
        try_send(request, Some(Self::body(pet_key))).await
    }

    /// Creates pets one after another, each with a key of its own, retrying a key until it is
    /// answered 201; stops between keys once told to.
    async fn client(&self, c: usize) {
        for n in 0.. {
            if self.stop.get() {
                return;
            }
            let pet_key = format!("c{c}-n{n}");
            loop {
                let outcome = self.create(&pet_key).await;
                match self.record(&pet_key, outcome) {
                    Then::NextKey => break,
                    Then::Retry => actix_web::rt::time::sleep(RETRY_PAUSE).await,
                    Then::GiveUp => return,
                }
            }
        }
    }

    /// Notes what a create of `pet_key` got, and says what the client does next.
    fn record(&self, pet_key: &str, outcome: Result<TestResponse, String>) -> Then {
        let mut seen = self.seen.borrow_mut();
        match outcome {
            Ok(response) if response.status == 201 => {
                let acknowledged = Acknowledged {
                    at: Instant::now(),
                    body: response.body,
                };
                seen.acknowledged.insert(pet_key.to_owned(), acknowledged);
                Then::NextKey
            }
            // 503: no primary answers yet; 409: the same key is still being carried out.
            Ok(response) if matches!(response.status.as_u16(), 503 | 409) => {
                seen.retried += 1;
                Then::Retry
            }
            Ok(response) => {
                let answer = format!("{}: {}", response.status, response.body);
                seen.unexpected.push(answer);
                Then::GiveUp
            }
            Err(_) => {
                seen.retried += 1;
                Then::Retry
            }
        }
    }

    fn acknowledged(&self) -> usize {
        self.seen.borrow().acknowledged.len()
    }

    fn acknowledged_since(&self, since: Instant) -> usize {
        let seen = self.seen.borrow();
        seen.acknowledged
            .values()
            .filter(|ack| ack.at > since)
            .count()
    }

    async fn not_ready(&self) -> Result<(), u16> {
        let request = client().get(format!("{}/readyz", self.address));
        match try_send(request, None).await {
            Ok(response) if response.status == 503 => Ok(()),
            Ok(response) => Err(response.status.as_u16()),
            Err(_) => Err(0),
        }
    }
}

#[actix_web::test]
async fn creates_resume_on_the_promoted_standby_and_no_acknowledged_pet_is_lost() {
    // fsync off: only the server processes are stopped, never the machine, so what PostgreSQL
    // has written survives without it. A commit is acknowledged once the standby has it.
    let primary = Arc::new(PostgresCluster::primary(&[
        "fsync=off",
        "synchronous_commit=on",
        "synchronous_standby_names=standby",
    ]));
    let standby = Arc::new(PostgresCluster::standby_of(
        &primary,
        "standby",
        &["fsync=off"],
    ));
    eventually_blocking(
        Duration::from_secs(10),
        "the standby streaming synchronously",
        || match primary.query("postgres", "SELECT sync_state FROM pg_stat_replication") {
            state if state == "sync" => Ok(()),
            state => Err(state),
        },
    );
    primary.query("postgres", "CREATE DATABASE petstore");
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/petstore?target_session_attrs=read-write",
        primary.port(),
        standby.port()
    );
    let data_dir = tempfile::tempdir().expect("a data directory");
    let env = [("DATABASE_URL".to_owned(), url.clone())];
    let migrated = run_petstore(data_dir.path(), &env, &["migrate"]);
    assert!(migrated.status.success(), "migrate: {migrated:?}");
    let (child, address) = start_server(data_dir.path(), &url, &[]);
    let _server = Server(child);
    let key = issue_key(data_dir.path(), &env, &["--name", "failover"]);

    let load = Load {
        address: &address,
        key: &key,
        stop: Cell::new(false),
        seen: RefCell::new(Seen::default()),
    };
    let clients = join_all((0..CLIENTS).map(|c| load.client(c)));
    let scenario = async {
        eventually(
            Duration::from_secs(20),
            "200 creates before the stop",
            async || match load.acknowledged() {
                done if done >= 200 => Ok(()),
                done => Err(done),
            },
        )
        .await;
        let stopping = Arc::clone(&primary);
        tokio::task::spawn_blocking(move || stopping.stop_immediately())
            .await
            .expect("stop the primary");
        let before_the_stop = load.acknowledged();
        eventually(
            Duration::from_secs(5),
            "/readyz 503 with no primary",
            async || load.not_ready().await,
        )
        .await;

        let promotion = Instant::now();
        let promoting = Arc::clone(&standby);
        tokio::task::spawn_blocking(move || promoting.promote())
            .await
            .expect("promote the standby");
        let promoted = promotion.elapsed();
        eventually(
            promotion + FAILOVER_BOUND,
            "a create answered 201 after the promotion",
            async || match load.acknowledged_since(promotion) {
                0 => Err(load.seen.borrow().unexpected.clone()),
                _ => Ok(()),
            },
        )
        .await;
        let first = load
            .seen
            .borrow()
            .acknowledged
            .values()
            .map(|ack| ack.at)
            .filter(|at| *at > promotion)
            .min()
            .expect("a create after the promotion");
        eprintln!(
            "failover: {before_the_stop} creates before the stop; `pg_ctl promote` took \
             {promoted:?}; the first 201 came {:?} after the promotion began ({:?} after it \
             ended)",
            first - promotion,
            first.saturating_duration_since(promotion + promoted)
        );
        eventually(
            Duration::from_secs(10),
            "100 creates after the promotion",
            async || match load.acknowledged_since(promotion) {
                done if done >= 100 => Ok(()),
                done => Err(done),
            },
        )
        .await;
        load.stop.set(true);
    };
    futures_util::future::join(clients, scenario).await;

    let seen = load.seen.into_inner();
    assert!(
        seen.unexpected.is_empty(),
        "answers other than 201, 409 and 503: {:?}",
        seen.unexpected
    );
    assert!(
        seen.retried > 0,
        "no create was refused while no primary answered"
    );
    eprintln!(
        "failover: {} creates acknowledged, {} retries",
        seen.acknowledged.len(),
        seen.retried
    );

    // What the promoted server holds: every acknowledged pet, once, with the id it was
    // acknowledged with; and nothing else (every key the clients sent was acknowledged).
    let rows = standby.query("petstore", "SELECT name, id FROM pets ORDER BY id");
    let mut stored = BTreeMap::<&str, Vec<i64>>::new();
    for row in rows.lines() {
        let (name, id) = row.split_once('|').expect("name|id");
        stored
            .entry(name)
            .or_default()
            .push(id.parse().expect("an id"));
    }
    let twice: Vec<_> = stored.iter().filter(|(_, ids)| ids.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "one key stored more than one pet: {twice:?}"
    );
    for (pet_key, ack) in &seen.acknowledged {
        let pet: Value = serde_json::from_str(&ack.body).expect("a pet");
        assert_eq!(
            stored.get(pet_key.as_str()).map(Vec::as_slice),
            Some(&[pet["id"].as_i64().expect("an id")][..]),
            "{pet_key} was acknowledged ({}) but is not on the promoted server",
            ack.body
        );
    }
    assert_eq!(
        stored.len(),
        seen.acknowledged.len(),
        "pets no client was told of"
    );

    // Through the service, each key's retry is answered from its stored response, byte for byte.
    let keys: Vec<_> = seen.acknowledged.iter().collect();
    for chunk in keys.chunks(CLIENTS) {
        let load = Load {
            address: &address,
            key: &key,
            stop: Cell::new(false),
            seen: RefCell::default(),
        };
        let replays = join_all(chunk.iter().map(|(pet_key, _)| load.create(pet_key))).await;
        for ((pet_key, ack), replay) in chunk.iter().zip(replays) {
            let replay = replay.unwrap_or_else(|err| panic!("{pet_key}: no answer: {err}"));
            assert_eq!(replay.status, 201, "{pet_key}: {}", replay.body);
            assert_eq!(
                replay.header("idempotent-replayed"),
                Some("true"),
                "{pet_key}"
            );
            assert_eq!(replay.body, ack.body, "{pet_key}: the replay differs");
        }
    }
}
