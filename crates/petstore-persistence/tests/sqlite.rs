//! SQLite-only guarantees: pets outlive the pool that wrote them, the file is created on first
//! use (its directory never is), and migrations run once.

mod common;

use common::{done, new_pet, open, parse};
use petstore_domain::PetSearch;
use petstore_domain::PetStatus;
use petstore_persistence::{migrate, PoolSettings, SqlStore};
use petstore_test_database::wal::{wal_of, wal_restarts};
use petstore_test_database::{eventually, TestSqliteFile};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pets_survive_reopening_the_file_and_ids_keep_increasing() {
    let file = TestSqliteFile::new();
    let first = {
        let repo = open(&file.url());
        let a = repo
            .create(new_pet("Rex", 1, None), None)
            .await
            .map(done)
            .expect("create");
        let b = repo
            .create(new_pet("Tom", 2, Some(PetStatus::Sold)), None)
            .await
            .map(done)
            .expect("create");
        vec![a, b]
        // The pool, and with it every connection, is dropped here.
    };
    let repo = open(&file.url());
    assert_eq!(
        repo.list(None, &PetSearch::default(), None, 100)
            .await
            .expect("list"),
        first
    );
    assert_eq!(
        repo.find(first[1].id()).await.expect("find"),
        Some(first[1].clone())
    );
    let later = repo
        .create(new_pet("Polly", 3, None), None)
        .await
        .map(done)
        .expect("create");
    assert!(later.id() > first[1].id());
}

#[test]
fn opening_creates_the_file_but_never_a_missing_directory() {
    let file = TestSqliteFile::new();
    assert!(!file.path().exists());
    let _repo = open(&file.url());
    assert!(file.path().is_file());

    let missing = file.dir().join("no/such/dir");
    let url = parse(&format!("sqlite://{}/pets.db", missing.display()));
    let err = petstore_persistence::open(&url, &PoolSettings::default())
        .expect_err("a database in a directory that does not exist");
    assert!(!err.is_transient());
    assert!(
        err.to_string().contains(&format!(
            "the directory {} of the SQLite database does not exist",
            missing.display()
        )),
        "{err}"
    );
    assert!(!file.dir().join("no").exists(), "the directory was created");
}

#[test]
fn migrations_apply_once_and_then_find_nothing_pending() {
    let file = TestSqliteFile::new();
    let url = parse(&file.url());
    let settings = PoolSettings::default();
    let applied = migrate(&url, &settings).expect("first run");
    assert_eq!(applied, common::migration_versions());
    assert!(migrate(&url, &settings).expect("second run").is_empty());
    let _repo = open(&file.url());
}

#[test]
fn the_database_uses_write_ahead_logging() {
    let file = TestSqliteFile::new();
    let repo = SqlStore::build(&parse(&file.url()), &PoolSettings::default()).expect("repository");
    repo.run_migrations().expect("migrate");
    repo.check().expect("check");
    assert!(
        wal_of(file.path()).exists(),
        "an open WAL-mode database has a -wal file beside it"
    );
}

#[test]
fn a_path_under_a_file_is_a_clear_permanent_error() {
    let file = TestSqliteFile::new();
    std::fs::write(file.dir().join("blocker"), b"a file, not a directory").expect("write");
    let url = parse(&format!(
        "sqlite://{}/blocker/pets.db",
        file.dir().display()
    ));
    let err = petstore_persistence::open(&url, &PoolSettings::default())
        .expect_err("cannot put a database under a file");
    assert!(!err.is_transient());
    assert!(err.to_string().contains("does not exist"), "{err}");
}

/// Two server processes (or `petstore migrate` next to `petstore serve`) share one file: every
/// write waits its turn instead of failing with "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_pools_writing_one_file_at_once_never_see_a_locked_database() {
    let file = TestSqliteFile::new();
    let pools = [open(&file.url()), open(&file.url())];
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..300 {
        let repo = std::sync::Arc::clone(&pools[i % 2]);
        tasks.spawn(async move {
            let pet = repo
                .create(new_pet(&format!("pet {i}"), 1, None), None)
                .await
                .map(done)?;
            repo.list(None, &PetSearch::default(), None, 100).await?;
            repo.find(pet.id()).await.map(|_| pet.id())
        });
    }
    let mut ids = std::collections::BTreeSet::new();
    while let Some(joined) = tasks.join_next().await {
        let id = joined
            .expect("task")
            .unwrap_or_else(|err| panic!("{err}: {:?}", std::error::Error::source(&err)));
        assert!(ids.insert(id), "id {id} handed out twice");
    }
    assert_eq!(ids.len(), 300);
}

#[test]
fn two_processes_migrating_a_new_file_at_once_both_succeed() {
    for _round in 0..3 {
        let file = TestSqliteFile::new();
        let url = parse(&file.url());
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (url, barrier) = (url.clone(), std::sync::Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    migrate(&url, &PoolSettings::default())
                })
            })
            .collect();
        let mut applied = Vec::new();
        for run in runs {
            applied.extend(
                run.join()
                    .expect("thread")
                    .unwrap_or_else(|err| panic!("a concurrent migration failed: {err}")),
            );
        }
        assert_eq!(applied, common::migration_versions());
    }
}

/// Writers never checkpoint (a commit that did would hold every other create back); the
/// background checkpointer folds the WAL into the database file while the pool stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpointer_folds_the_wal_into_the_database_file_in_the_background() {
    let file = TestSqliteFile::new();
    let repo = open(&file.url());
    let size = || std::fs::metadata(file.path()).map_or(0, |meta| meta.len());
    let empty = size();
    for round in 0..4 {
        // 500 at a time: within the queue of creates waiting for a commit.
        let creates: Vec<_> = (0..500)
            .map(|n| {
                let repo = std::sync::Arc::clone(&repo);
                let pet = new_pet(&format!("pet {round}-{n}"), 1, None);
                tokio::spawn(async move { repo.create(pet, None).await.map(done) })
            })
            .collect();
        for create in creates {
            create.await.expect("task").expect("create");
        }
    }

    // 2,000 rows and their index entries take well over 64 KiB; until a checkpoint copies them,
    // they live only in the WAL and the database file keeps its empty size.
    eventually(
        std::time::Duration::from_secs(5),
        &format!("a checkpoint to grow the database file from its empty {empty} bytes"),
        async || match size() {
            grown if grown >= 64 * 1024 => Ok(()),
            bytes => Err(bytes),
        },
    )
    .await;
    assert_eq!(
        repo.list(None, &PetSearch::default(), None, 100)
            .await
            .expect("list")
            .len(),
        100
    );
}

/// The migrations that turn the idempotency table into a rowid table purged by arrival
/// (2026-11-26) keep every record a server stored before them: a retry sent across the upgrade
/// is still replayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_records_survive_the_rebuild_in_arrival_order() {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    use petstore_domain::{IdempotencyKey, KeyId};

    let file = TestSqliteFile::new();
    migrate(&parse(&file.url()), &PoolSettings::default()).expect("migrate");
    {
        // Back to the schema before that migration, with a record stored as it stored them.
        let mut conn = diesel::SqliteConnection::establish(file.path().to_str().expect("utf-8"))
            .expect("connect");
        conn.batch_execute(include_str!(
            "../../../migrations/sqlite/2026-11-26-000001_purge_idempotency_records_in_arrival_order/down.sql"
        ))
        .expect("revert");
        conn.batch_execute(include_str!(
            "../../../migrations/sqlite/2026-11-26-000000_idempotency_records_in_arrival_order/down.sql"
        ))
        .expect("revert");
        conn.batch_execute(
            "DELETE FROM __diesel_schema_migrations WHERE version IN ('20261126000000', '20261126000001');
             INSERT INTO idempotency_records (owner, key, fingerprint, status, headers, body, stored_at)
             VALUES ('11111111111111111111111111111111', 'before-the-upgrade', zeroblob(32), 201, 'location: /v1/pets/1', '{\"id\":1}', 1900000000);",
        )
        .expect("a record in the old table");
    }
    assert_eq!(
        migrate(&parse(&file.url()), &PoolSettings::default()).expect("migrate again"),
        ["20261126000000", "20261126000001"]
    );
    let storage = common::open_storage(&file.url());
    let key = IdempotencyKey::parse("before-the-upgrade").expect("key");
    let record = storage
        .idempotency
        .find(&KeyId::parse(&"1".repeat(32)).unwrap(), &key)
        .await
        .expect("find")
        .expect("the record is still there");
    assert_eq!(record.response.body, b"{\"id\":1}");
    assert_eq!(record.stored_at, 1_900_000_000);
}

/// Readers keep their snapshot open between reads (`read_snapshot.rs`); a write's commit ends
/// it, so each read right after a create finds the pet, though the reads before it kept one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_right_after_a_create_finds_the_pet_although_readers_keep_snapshots() {
    let file = TestSqliteFile::new();
    let repo = open(&file.url());
    let first = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let mut before = first.id();
    for n in 0..200 {
        assert!(repo.find(first.id()).await.expect("find").is_some());
        let pet = repo
            .create(new_pet(&format!("pet {n}"), 1, None), None)
            .await
            .map(done)
            .expect("create");
        assert_eq!(repo.find(pet.id()).await.expect("find"), Some(pet.clone()));
        let page = repo
            .list(None, &PetSearch::default(), Some(before), 20)
            .await
            .expect("list");
        assert_eq!(
            page,
            std::slice::from_ref(&pet),
            "the page after the last pet holds the new one"
        );
        before = pet.id();
    }
}

/// Frames in the WAL and whether a `TRUNCATE` checkpoint (which must wait for every reader
/// using the WAL) was kept from starting it over, seen from a connection of the test's own.
fn truncate_wal(path: &std::path::Path) -> (i32, i32) {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, RunQueryDsl};
    #[derive(diesel::QueryableByName)]
    struct Checkpoint {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        busy: i32,
        #[diesel(sql_type = diesel::sql_types::Integer)]
        log: i32,
    }
    let mut conn =
        diesel::SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    conn.batch_execute("PRAGMA busy_timeout = 0")
        .expect("busy timeout");
    let done: Checkpoint = diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)")
        .get_result(&mut conn)
        .expect("checkpoint");
    (done.busy, done.log)
}

/// A snapshot left open by a read that is not followed by another is ended within moments, so an
/// idle server holds no read that keeps its WAL from being started over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_readers_snapshot_is_ended_so_the_wal_can_start_over() {
    let file = TestSqliteFile::new();
    let repo = open(&file.url());
    let pet = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    assert!(repo.find(pet.id()).await.expect("find").is_some());
    eventually(
        std::time::Duration::from_secs(2),
        "the WAL to be started over once the read's snapshot was ended",
        async || match truncate_wal(file.path()) {
            (0, _) => Ok(()),
            busy => Err(busy),
        },
    )
    .await;
}

/// Reads that never pause keep a snapshot open all the time; the checkpointer still starts the
/// WAL over, so it stays bounded under a steady load of reads and writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_is_started_over_while_reads_never_pause() {
    let file = TestSqliteFile::new();
    let repo = open(&file.url());
    let id = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create")
        .id();
    let reading = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (repo, reading) = (
                std::sync::Arc::clone(&repo),
                std::sync::Arc::clone(&reading),
            );
            tokio::spawn(async move {
                while reading.load(std::sync::atomic::Ordering::Relaxed) {
                    assert!(repo.find(id).await.expect("find").is_some());
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    // Each create commits several pages: 3,000 of them fill the WAL's 1,000 pages, past which
    // the checkpointer starts it over, again and again.
    let before = wal_restarts(file.path());
    for n in 0..3_000 {
        repo.create(new_pet(&format!("pet {n}"), 1, None), None)
            .await
            .map(done)
            .expect("create");
    }
    let restarts = wal_restarts(file.path()) - before;
    reading.store(false, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader");
    }
    assert!(
        restarts >= 2,
        "the WAL was started over {restarts} times while 3,000 creates filled it many times over"
    );
}
