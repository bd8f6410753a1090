//! Group commit on the SQL backends: creates that arrive while a commit is under way are stored
//! together by the next one, a pet the database refuses fails alone, a group whose commit fails
//! stores nothing, and a full queue is refused at once.
//!
//! Each test holds the database's write lock from a connection of its own (SQLite: an open
//! `BEGIN IMMEDIATE`; PostgreSQL: the insert-ordering advisory lock) so that the first create
//! waits inside its commit while the next ones queue up behind it and form one group.

mod common;

use petstore_domain::PetSearch;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{done, new_pet, parse, wait_until};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use petstore_application::{PetRepository, RepositoryError};
use petstore_domain::Pet;
use petstore_persistence::{PoolMetrics, PoolSettings};
use petstore_test_database::{TestDatabase, TestSqliteFile};
use tokio::task::JoinHandle;

/// The key of the insert-ordering lock (`INSERT_LOCK_KEY` in `src/sql/batch_insert.rs`).
const INSERT_LOCK_KEY: i64 = 0x7065_7473_5f69_6473;

/// The pets of a store opened as the server opens it, and its pool and queue gauges, which tell
/// the tests where the creates they sent are.
fn open_with_metrics(url: &str, settings: &PoolSettings) -> (Arc<dyn PetRepository>, PoolMetrics) {
    let storage = petstore_persistence::open(&parse(url), settings)
        .unwrap_or_else(|err| panic!("cannot open {url}: {err}"));
    (
        storage.pets,
        storage.pool_metrics.expect("a SQL store has gauges"),
    )
}

/// Once the writer thread has taken the create it was sent and waits for the write lock with
/// it: a connection checked out, nothing left in the queue.
async fn writer_holds_the_first(metrics: &PoolMetrics) {
    wait_until("the writer took the first create", metrics, |metrics| {
        metrics.connections_in_use() >= 1 && metrics.queued_creates() == 0
    })
    .await;
}

/// Holds the write lock of a database until released or dropped.
enum WriteLock {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl WriteLock {
    fn sqlite(file: &TestSqliteFile) -> Self {
        let path = file.path().to_str().expect("UTF-8 path");
        let mut conn = SqliteConnection::establish(path).expect("open SQLite");
        conn.batch_execute("BEGIN IMMEDIATE")
            .expect("take the write lock");
        Self::Sqlite(conn)
    }

    fn postgres(database: &TestDatabase) -> Self {
        let mut conn = PgConnection::establish(database.url()).expect("connect");
        diesel::sql_query("SELECT pg_advisory_lock($1)")
            .bind::<BigInt, _>(INSERT_LOCK_KEY)
            .execute(&mut conn)
            .expect("take the insert lock");
        Self::Postgres(conn)
    }

    fn release(self) {
        match self {
            Self::Sqlite(mut conn) => conn.batch_execute("COMMIT").expect("release"),
            Self::Postgres(mut conn) => {
                diesel::sql_query("SELECT pg_advisory_unlock($1)")
                    .bind::<BigInt, _>(INSERT_LOCK_KEY)
                    .execute(&mut conn)
                    .expect("release");
            }
        }
    }
}

fn spawn_create(
    repo: &Arc<dyn PetRepository>,
    name: &str,
) -> JoinHandle<Result<Pet, RepositoryError>> {
    let repo = Arc::clone(repo);
    let pet = new_pet(name, 1, None);
    tokio::spawn(async move { repo.create(pet, None).await.map(done) })
}

/// Sends one create that will wait on the lock, then `names` that queue up behind it, then
/// releases the lock; returns the first create's outcome and the others', in order.
async fn first_then_group(
    repo: &Arc<dyn PetRepository>,
    metrics: &PoolMetrics,
    lock: WriteLock,
    names: &[&str],
) -> (
    Result<Pet, RepositoryError>,
    Vec<Result<Pet, RepositoryError>>,
) {
    let first = spawn_create(repo, "First");
    writer_holds_the_first(metrics).await;
    let group: Vec<_> = names.iter().map(|name| spawn_create(repo, name)).collect();
    wait_until("the group queued behind the first", metrics, |metrics| {
        metrics.queued_creates() == names.len()
    })
    .await;
    lock.release();
    let first = first.await.expect("task");
    let mut outcomes = Vec::new();
    for create in group {
        outcomes.push(create.await.expect("task"));
    }
    (first, outcomes)
}

async fn stored_names(repo: &Arc<dyn PetRepository>) -> Vec<String> {
    repo.list(None, &PetSearch::default(), None, 100)
        .await
        .expect("list")
        .into_iter()
        .map(|pet| pet.name().as_str().to_owned())
        .collect()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_creates_that_arrive_during_a_commit_share_the_next_one() {
    let database = TestDatabase::create();
    let (repo, metrics) = open_with_metrics(database.url(), &PoolSettings::default());
    let lock = WriteLock::postgres(&database);
    let names: Vec<String> = (0..20).map(|n| format!("Pet {n}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();

    let (first, group) = first_then_group(&repo, &metrics, lock, &names).await;

    let first = first.expect("the first create");
    let mut ids = Vec::new();
    for (outcome, name) in group.into_iter().zip(&names) {
        let pet = outcome.expect("a create of the group");
        assert_eq!(pet.name().as_str(), *name);
        assert!(pet.id() > first.id(), "ids increase in commit order");
        ids.push(pet.id());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 20, "every pet got an id of its own");
    let mut conn = PgConnection::establish(database.url()).expect("connect");
    let transactions: Count = diesel::sql_query("SELECT count(DISTINCT xmin::text) AS n FROM pets")
        .get_result(&mut conn)
        .expect("count transactions");
    assert_eq!(
        transactions.n, 2,
        "the first create alone, then the twenty that queued behind it in one transaction"
    );
}

async fn a_refused_pet_fails_alone(
    repo: Arc<dyn PetRepository>,
    metrics: PoolMetrics,
    lock: WriteLock,
) {
    let names = ["Rex", "Poison", "Tom", "Polly", "Poison", "Felix"];
    let (first, group) = first_then_group(&repo, &metrics, lock, &names).await;

    first.expect("the first create");
    for (outcome, name) in group.iter().zip(names) {
        if name == "Poison" {
            assert!(
                matches!(outcome, Err(RepositoryError::Unexpected(_))),
                "{name}: {outcome:?}"
            );
        } else {
            assert_eq!(outcome.as_ref().expect(name).name().as_str(), name);
        }
    }
    // The group's creates were sent at once, so they queue in no particular order.
    let mut stored = stored_names(&repo).await;
    stored.sort_unstable();
    assert_eq!(stored, ["Felix", "First", "Polly", "Rex", "Tom"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_pet_the_database_refuses_fails_alone_and_its_group_is_stored() {
    let file = TestSqliteFile::new();
    let (repo, metrics) = open_with_metrics(&file.url(), &PoolSettings::default());
    let mut setup =
        SqliteConnection::establish(file.path().to_str().expect("UTF-8")).expect("open");
    setup
        .batch_execute(
            "CREATE TRIGGER refuse_poison BEFORE INSERT ON pets WHEN NEW.name = 'Poison' \
             BEGIN SELECT RAISE(ABORT, 'poisoned pet'); END;",
        )
        .expect("trigger");
    a_refused_pet_fails_alone(repo, metrics, WriteLock::sqlite(&file)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_pet_the_database_refuses_fails_alone_and_its_group_is_stored() {
    let database = TestDatabase::create();
    let (repo, metrics) = open_with_metrics(database.url(), &PoolSettings::default());
    database.execute(
        "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN IF NEW.name = 'Poison' THEN RAISE EXCEPTION 'poisoned pet'; END IF; \
         RETURN NEW; END $$; \
         CREATE TRIGGER refuse_poison BEFORE INSERT ON pets \
         FOR EACH ROW EXECUTE FUNCTION refuse_poison();",
    );
    a_refused_pet_fails_alone(repo, metrics, WriteLock::postgres(&database)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_group_whose_commit_fails_stores_none_of_its_pets() {
    let database = TestDatabase::create();
    let (repo, metrics) = open_with_metrics(database.url(), &PoolSettings::default());
    // Checked at COMMIT, after every insert of the group succeeded.
    database.execute(
        "CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN IF NEW.name = 'Doomed' THEN RAISE EXCEPTION 'refused at commit'; END IF; \
         RETURN NEW; END $$; \
         CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON pets \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();",
    );
    let names = ["Rex", "Tom", "Doomed", "Polly"];

    let (first, group) =
        first_then_group(&repo, &metrics, WriteLock::postgres(&database), &names).await;

    first.expect("the first create, committed alone");
    for (outcome, name) in group.iter().zip(names) {
        assert!(
            matches!(outcome, Err(RepositoryError::Unexpected(_))),
            "{name}: {outcome:?}"
        );
    }
    assert_eq!(stored_names(&repo).await, ["First"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_finding_the_queue_full_is_refused_at_once() {
    let file = TestSqliteFile::new();
    let settings = PoolSettings {
        queue_size: 2,
        ..PoolSettings::default()
    };
    let (repo, metrics) = open_with_metrics(&file.url(), &settings);
    let lock = WriteLock::sqlite(&file);
    let committing = spawn_create(&repo, "First");
    writer_holds_the_first(&metrics).await;
    let queued = [spawn_create(&repo, "Rex"), spawn_create(&repo, "Tom")];
    wait_until("two creates fill the queue", &metrics, |metrics| {
        metrics.queued_creates() == 2
    })
    .await;

    let started = Instant::now();
    let refused = repo.create(new_pet("Polly", 1, None), None).await.map(done);
    assert!(
        matches!(refused, Err(RepositoryError::Unavailable(_))),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "refused after {:?}, not at once",
        started.elapsed()
    );

    lock.release();
    committing.await.expect("task").expect("first");
    for create in queued {
        create.await.expect("task").expect("queued create");
    }
    let mut stored = stored_names(&repo).await;
    stored.sort_unstable();
    assert_eq!(stored, ["First", "Rex", "Tom"]);
}
