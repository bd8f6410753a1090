//! PostgreSQL-only guarantees: migrations safe to run twice and from two instances at once, an
//! unreachable server reported as `Unavailable` within the configured bound, connections lost
//! to a restart replaced, and database errors never passed on as they are.
//!
//! Needs `TEST_DATABASE_URL`: `bash tests/support/with-postgres.sh cargo test -p petstore-persistence`.

mod common;

use petstore_domain::PetSearch;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{done, new_pet, open, parse};
use petstore_application::{PetRepository, RepositoryError};
use petstore_domain::PetId;
use petstore_persistence::{migrate, PoolSettings, SqlStore};
use petstore_test_database::{eventually, unreachable_postgres_url, TestDatabase};

const ONE_SECOND: PoolSettings = PoolSettings {
    max_size: 4,
    checkout_timeout: Duration::from_secs(1),
    connect_timeout: Duration::from_secs(1),
    statement_timeout: Duration::from_secs(1),
    queue_size: PoolSettings::DEFAULT_QUEUE_SIZE,
};

#[test]
fn migrations_apply_once_and_then_find_nothing_pending() {
    let database = TestDatabase::create();
    let url = parse(database.url());
    let applied = migrate(&url, &PoolSettings::default()).expect("first run");
    assert_eq!(applied, common::migration_versions());
    assert!(migrate(&url, &PoolSettings::default())
        .expect("second run")
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_migrating_a_fresh_database_at_once_both_succeed() {
    for _round in 0..3 {
        let database = TestDatabase::create();
        let url = parse(database.url());
        let barrier = Arc::new(Barrier::new(2));
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (url, barrier) = (url.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    migrate(&url, &PoolSettings::default())
                })
            })
            .collect();
        let mut applied = Vec::new();
        for run in runs {
            let versions = run
                .join()
                .expect("thread")
                .unwrap_or_else(|err| panic!("a concurrent migration failed: {err}"));
            applied.extend(versions);
        }
        assert_eq!(
            applied,
            common::migration_versions(),
            "exactly one run applies it"
        );
        let repo = open(database.url());
        repo.create(new_pet("Rex", 1, None), None)
            .await
            .map(done)
            .expect("create");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_unavailable_within_the_configured_time() {
    let url = parse(&unreachable_postgres_url());
    let repo = SqlStore::build(&url, &ONE_SECOND)
        .expect("a pool needs no server")
        .pets();
    let bound = Duration::from_secs(3);

    let started = Instant::now();
    let created = repo.create(new_pet("Rex", 1, None), None).await.map(done);
    assert!(
        matches!(created, Err(RepositoryError::Unavailable(_))),
        "{created:?}"
    );
    assert!(
        started.elapsed() < bound,
        "create took {:?}",
        started.elapsed()
    );

    let started = Instant::now();
    let listed = repo.list(None, &PetSearch::default(), None, 20).await;
    assert!(
        matches!(listed, Err(RepositoryError::Unavailable(_))),
        "{listed:?}"
    );
    assert!(
        started.elapsed() < bound,
        "list took {:?}",
        started.elapsed()
    );

    let started = Instant::now();
    let found = repo.find(PetId::new(1)).await;
    assert!(
        matches!(found, Err(RepositoryError::Unavailable(_))),
        "{found:?}"
    );
    let pinged = repo.ping().await;
    assert!(
        matches!(pinged, Err(RepositoryError::Unavailable(_))),
        "{pinged:?}"
    );
    assert!(
        started.elapsed() < bound * 2,
        "find+ping took {:?}",
        started.elapsed()
    );
}

#[test]
fn opening_an_unreachable_server_fails_in_bounded_time_as_transient_without_the_password() {
    let url = unreachable_postgres_url().replace("petstore@", "petstore:hunter2@");
    let started = Instant::now();
    let err =
        petstore_persistence::open(&parse(&url), &ONE_SECOND).expect_err("nothing listens there");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(err.is_transient(), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("cannot connect to the database postgres://petstore:***@"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!format!("{err:?}").contains("hunter2"));
}

/// Every character RFC 3986 reserves, `%` and a space, in one password.
const RESERVED_PASSWORD: &str = ":/?#[]@!$&'()*+,;=% x";

/// `RESERVED_PASSWORD` written as libpq needs it in the userinfo (`/`, `@` and `%` encoded,
/// the rest as they are) and in the query (`&`, `=`, `%` and `@` encoded).
fn written_for_libpq(password: &str, encoded: &str) -> String {
    password
        .chars()
        .map(|c| {
            if encoded.contains(c) {
                format!("%{:02X}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A role whose password holds every reserved character logs in, with the password in
/// `user:password@` or in `?password=`: libpq reads it whole (our parameters, appended to the
/// URL, leave it alone), and what the URL shows hides it and keeps host, port and database.
#[test]
fn a_password_with_every_reserved_character_logs_in_and_never_shows() {
    let database = TestDatabase::create();
    let role = format!("{}_app", database.name());
    // `tests/support/with-postgres.sh` makes members of `password_login` give their password.
    database.execute(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD '{}' IN ROLE password_login; \
         ALTER DATABASE \"{}\" OWNER TO {role}",
        RESERVED_PASSWORD.replace('\'', "''"),
        database.name()
    ));
    let (server, path) = database
        .url()
        .strip_prefix("postgres://postgres@")
        .and_then(|rest| rest.split_once('/'))
        .expect("postgres://postgres@HOST:PORT/DATABASE");
    let in_userinfo = written_for_libpq(RESERVED_PASSWORD, "/@%");
    let in_query = written_for_libpq(RESERVED_PASSWORD, "&=%@");
    for (raw, shown) in [
        (
            format!("postgres://{role}:{in_userinfo}@{server}/{path}"),
            format!("postgres://{role}:***@{server}/{path}"),
        ),
        (
            format!("postgres://{role}@{server}/{path}?password={in_query}&sslmode=disable"),
            format!("postgres://{role}@{server}/{path}?password=***&sslmode=disable"),
        ),
    ] {
        let url = parse(&raw);
        assert_eq!(url.to_string(), shown);
        migrate(&url, &PoolSettings::default()).unwrap_or_else(|err| panic!("{shown}: {err}"));
    }
}

#[test]
fn a_wrong_database_name_is_reported_by_name() {
    let database = TestDatabase::create();
    let url = database
        .url()
        .replace(database.name(), "petstore_no_such_database");
    let err = petstore_persistence::open(&parse(&url), &ONE_SECOND).expect_err("no such database");
    assert!(
        err.to_string().contains("petstore_no_such_database"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_killed_by_the_server_are_replaced_on_the_next_request() {
    let database = TestDatabase::create();
    let repo = open(database.url());
    let pet = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    // What a server restart does to every pooled connection.
    database.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    assert_eq!(
        repo.find(pet.id()).await.expect("find after kill"),
        Some(pet)
    );
    repo.create(new_pet("Tom", 1, None), None)
        .await
        .map(done)
        .expect("create after kill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unique_violation_is_unexpected_and_shows_no_sql() {
    let database = TestDatabase::create();
    let repo = open(database.url());
    // Someone inserted rows with explicit ids, bypassing the identity sequence.
    database.execute(
        "INSERT INTO pets (id, name, category_id, status) VALUES (1, 'x', 1, 'sold'), \
         (2, 'y', 1, 'sold')",
    );
    let err = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect_err("the sequence hands out id 1 again");
    assert!(matches!(err, RepositoryError::Unexpected(_)), "{err:?}");
    assert_eq!(err.to_string(), "storage failed unexpectedly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_breaking_the_domain_rules_is_unexpected_not_a_crash() {
    let database = TestDatabase::create();
    let repo = open(database.url());
    database.execute(
        "ALTER TABLE pets DROP CONSTRAINT pets_status_check; \
         INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'adopted')",
    );
    let found = repo.find(PetId::new(1)).await;
    assert!(
        matches!(found, Err(RepositoryError::Unexpected(_))),
        "{found:?}"
    );
    let listed = repo.list(None, &PetSearch::default(), None, 20).await;
    assert!(
        matches!(listed, Err(RepositoryError::Unexpected(_))),
        "{listed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_rejects_a_status_outside_the_three() {
    let database = TestDatabase::create();
    let _repo = open(database.url());
    let err = database
        .try_execute("INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'SOLD')")
        .expect_err("the CHECK constraint must refuse 'SOLD'");
    assert!(err.contains("pets_status_check"), "{err}");
}

#[test]
fn check_answers_when_the_server_does() {
    let database = TestDatabase::create();
    let repo =
        SqlStore::build(&parse(database.url()), &PoolSettings::default()).expect("repository");
    repo.check().expect("server is up");
    let down =
        SqlStore::build(&parse(&unreachable_postgres_url()), &ONE_SECOND).expect("repository");
    assert!(down.check().expect_err("nothing listens").is_transient());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_past_the_statement_timeout_is_unavailable_and_stores_nothing() {
    let database = TestDatabase::create();
    let repo = petstore_persistence::open(&parse(database.url()), &ONE_SECOND)
        .expect("open")
        .pets;
    // A server that takes the insert but does not finish it in time.
    database.execute(
        "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(10); RETURN NEW; END $$; \
         CREATE TRIGGER stall AFTER INSERT ON pets FOR EACH ROW EXECUTE FUNCTION stall();",
    );
    let started = Instant::now();

    let err = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect_err("the insert stalls past the 1 s statement timeout");

    assert!(matches!(err, RepositoryError::Unavailable(_)), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    database.execute("DROP TRIGGER stall ON pets");
    assert_eq!(
        repo.list(None, &PetSearch::default(), None, 20)
            .await
            .expect("list"),
        vec![]
    );
}

/// Reads that pile up while the table is locked are answered in groups (one query for all the
/// point reads, one per distinct page): each still gets exactly its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_queued_behind_a_lock_are_grouped_and_each_gets_its_own_answer() {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, PgConnection};
    use petstore_domain::PetStatus;

    let database = TestDatabase::create();
    let repo = open(database.url());
    let mut pets = Vec::new();
    for n in 0..30 {
        let status = [PetStatus::Available, PetStatus::Sold][n % 2];
        pets.push(
            repo.create(new_pet(&format!("pet {n}"), 1, Some(status)), None)
                .await
                .map(done)
                .expect("create"),
        );
    }
    let mut locker = PgConnection::establish(database.url()).expect("connect");
    locker
        .batch_execute("BEGIN; LOCK TABLE pets IN ACCESS EXCLUSIVE MODE;")
        .expect("lock the table");

    let mut finds = Vec::new();
    for id in pets.iter().map(|pet| pet.id().get()).chain([0, 999_999]) {
        for _ in 0..2 {
            let repo = Arc::clone(&repo);
            finds.push((
                id,
                tokio::spawn(async move { repo.find(PetId::new(id)).await }),
            ));
        }
    }
    let page_requests = [
        (None, None, 10),
        (Some(PetStatus::Sold), None, 5),
        (None, Some(pets[9].id()), 10),
    ];
    let mut pages = Vec::new();
    for (status, after, max) in page_requests.into_iter().cycle().take(9) {
        let repo = Arc::clone(&repo);
        pages.push((
            (status, after, max),
            tokio::spawn(async move { repo.list(status, &PetSearch::default(), after, max).await }),
        ));
    }
    // The reads have reached the database once a reader's query waits for the lock; the
    // others queue behind it meanwhile.
    eventually(
        Duration::from_secs(10),
        "a read waiting for the lock",
        async || match database.sessions_running("select") {
            (_, 0) => Err("no read waits"),
            _ => Ok(()),
        },
    )
    .await;
    locker.batch_execute("COMMIT").expect("unlock");

    for (id, find) in finds {
        let found = find.await.expect("task").expect("find");
        assert_eq!(found, pets.iter().find(|pet| pet.id().get() == id).cloned());
    }
    for ((status, after, max), page) in pages {
        let expected: Vec<_> = pets
            .iter()
            .filter(|pet| status.is_none_or(|s| pet.status() == s))
            .filter(|pet| after.is_none_or(|a| pet.id() > a))
            .take(max)
            .cloned()
            .collect();
        assert_eq!(page.await.expect("task").expect("list"), expected);
    }
}

/// The purge reads the idempotency table a slice per round (no index on `stored_at` for every
/// keyed write to pay for): a round removes the expired records of its slice only, later rounds
/// reach the rest, and no live record goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_purge_sweeps_the_records_a_slice_per_round_and_reaches_them_all() {
    use diesel::connection::SimpleConnection;
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    use diesel::{Connection, PgConnection, RunQueryDsl};

    let database = TestDatabase::create();
    let storage = common::open_storage(database.url());
    let mut conn = PgConnection::establish(database.url()).expect("connect");
    // About 700 blocks of 8 KiB: several rounds' slices. Every tenth record is live.
    conn.batch_execute(
        "INSERT INTO idempotency_records (owner, key, fingerprint, status, headers, body, stored_at)
         SELECT 'k1', 'key-' || n, '\\x00'::bytea, 201, 'location: /v1/pets/1',
                convert_to(repeat('x', 250), 'UTF8'),
                CASE WHEN n % 10 = 0 THEN 2000000000 ELSE 1000 END
         FROM generate_series(1, 20000) AS n;",
    )
    .expect("fill the table");
    let count = |conn: &mut PgConnection, which: &str| -> i64 {
        diesel::select(sql::<BigInt>(&format!(
            "(SELECT count(*) FROM idempotency_records WHERE {which})"
        )))
        .get_result(conn)
        .expect("count")
    };
    let expired = count(&mut conn, "stored_at < 1000000");
    assert_eq!(expired, 18_000);

    // A round as the server's purge runs it: batches of 1,000 until one comes back short.
    let mut rounds = Vec::new();
    while count(&mut conn, "stored_at < 1000000") > 0 {
        assert!(rounds.len() < 12, "still expired records after {rounds:?}");
        let mut removed = 0;
        loop {
            let batch = storage
                .idempotency
                .purge(1_000_000, 1_000)
                .await
                .expect("purge");
            removed += batch;
            if batch < 1_000 {
                break;
            }
        }
        rounds.push(removed);
    }
    assert!(
        rounds.len() > 1 && rounds[0] < 18_000,
        "one round swept the whole table: {rounds:?}"
    );
    assert_eq!(rounds.iter().sum::<usize>(), 18_000, "{rounds:?}");
    assert_eq!(
        count(&mut conn, "stored_at >= 1000000"),
        2_000,
        "live records stay"
    );
}
