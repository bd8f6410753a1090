//! Shared commits on SQLite: the pets' changes and the orders' transactions that queue up while
//! a write is under way run together in the writer's next transaction, each in a savepoint of
//! its own, and are answered after its one commit: all of them stored and there to read after
//! a restart, a refused or failed one alone left unwritten, and none answered as a success when
//! the commit fails.
//!
//! Each test holds the database's write lock from a connection of its own (an open
//! `BEGIN IMMEDIATE`) so that a first write waits inside its transaction while the next ones
//! queue up behind it and form one group.

mod common;

use std::sync::Arc;

use common::{done, new_pet, parse, wait_until};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use petstore_application::{
    OrderError, OrderService, PetRepository, PetService, PetWriteError, RepositoryError,
    SystemClock, VersionCondition, Written,
};
use petstore_domain::{
    Caller, KeyId, KeyScope, NewOrder, OrderQuantity, Patch, Pet, PetChange, PetChangeFields,
    PetId, PetName, PetStatus,
};
use petstore_persistence::{PoolMetrics, PoolSettings, Storage};
use petstore_test_database::TestSqliteFile;
use tokio::task::JoinHandle;

/// A store opened on `file` as the server opens it, with the gauges that tell the tests where
/// the writes they sent are.
fn open(file: &TestSqliteFile) -> (Storage, PoolMetrics) {
    let storage = petstore_persistence::open(&parse(&file.url()), &PoolSettings::default())
        .unwrap_or_else(|err| panic!("cannot open {}: {err}", file.url()));
    let metrics = storage
        .pool_metrics
        .clone()
        .expect("a SQL store has gauges");
    (storage, metrics)
}

/// The database's write lock, held by a connection of its own until released.
struct WriteLock(SqliteConnection);

impl WriteLock {
    fn take(file: &TestSqliteFile) -> Self {
        let mut conn = connect(file);
        conn.batch_execute("BEGIN IMMEDIATE")
            .expect("take the write lock");
        Self(conn)
    }

    fn release(mut self) {
        self.0.batch_execute("COMMIT").expect("release");
    }
}

fn connect(file: &TestSqliteFile) -> SqliteConnection {
    SqliteConnection::establish(file.path().to_str().expect("UTF-8 path")).expect("open SQLite")
}

/// Runs `first`, waits until the writer holds it, waiting for the lock; then runs `group`, waits
/// until all of it is queued, and releases the lock: `group` comes to the writer as one round.
/// Returns the outcomes of `first` and of `group`, in order.
async fn first_then_group<T: Send + 'static>(
    file: &TestSqliteFile,
    metrics: &PoolMetrics,
    first: impl std::future::Future<Output = T> + Send + 'static,
    group: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>>,
) -> (T, Vec<T>) {
    let lock = WriteLock::take(file);
    let first = tokio::spawn(first);
    wait_until("the writer took the first write", metrics, |metrics| {
        metrics.connections_in_use() >= 1 && metrics.queued_creates() == 0
    })
    .await;
    let count = group.len();
    let group: Vec<JoinHandle<T>> = group.into_iter().map(tokio::spawn).collect();
    wait_until("the group queued behind the first", metrics, |metrics| {
        metrics.queued_creates() == count
    })
    .await;
    lock.release();
    let first = first.await.expect("task");
    let mut outcomes = Vec::with_capacity(count);
    for write in group {
        outcomes.push(write.await.expect("task"));
    }
    (first, outcomes)
}

fn pet_service(storage: &Storage) -> PetService {
    PetService::new(Arc::clone(&storage.pets), Arc::new(SystemClock))
}

fn orders(storage: &Storage) -> OrderService {
    OrderService::new(Arc::clone(&storage.orders), Arc::new(SystemClock))
}

fn staff() -> Caller {
    Caller::new(
        KeyId::parse(&"5".repeat(32)).expect("a key id"),
        KeyScope::Store,
    )
}

fn rename(name: &str) -> PetChange {
    PetChange::new(PetChangeFields {
        name: Patch::Set(PetName::parse(name).expect("a name")),
        ..Default::default()
    })
    .expect("a valid change")
}

fn set_status(status: PetStatus) -> PetChange {
    PetChange::new(PetChangeFields {
        status: Patch::Set(status),
        ..Default::default()
    })
    .expect("a valid change")
}

type Change = Result<Written<Pet>, PetWriteError>;
type Pending<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// `id`'s change to `change`, under `condition`, not yet run.
fn change_of(
    storage: &Storage,
    id: PetId,
    change: PetChange,
    condition: Option<VersionCondition>,
) -> Pending<Change> {
    let service = pet_service(storage);
    Box::pin(async move { service.update_pet(id, change, condition, None).await })
}

async fn created(repo: &Arc<dyn PetRepository>, names: &[String]) -> Vec<Pet> {
    let mut pets = Vec::with_capacity(names.len());
    for name in names {
        let pet = repo.create(new_pet(name, 1, None), None).await;
        pets.push(pet.map(done).expect("create"));
    }
    pets
}

/// Every pet of a store opened anew on `file` (the one before it dropped): what a restart
/// finds on disk.
async fn after_a_restart(file: &TestSqliteFile, ids: &[PetId]) -> Vec<Option<Pet>> {
    let (storage, _) = open(file);
    let mut found = Vec::with_capacity(ids.len());
    for id in ids {
        found.push(storage.pets.find(*id).await.expect("find"));
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_that_queue_together_are_all_written_and_survive_a_restart() {
    let file = TestSqliteFile::new();
    let (storage, metrics) = open(&file);
    let names: Vec<String> = (0..41).map(|n| format!("Pet {n}")).collect();
    let pets = created(&storage.pets, &names).await;
    let group = pets[1..]
        .iter()
        .map(|pet| {
            let condition = Some(VersionCondition::OneOf(vec![pet.version()]));
            change_of(&storage, pet.id(), rename("Renamed"), condition)
        })
        .collect();

    let first = change_of(&storage, pets[0].id(), rename("First"), None);
    let (first, group) = first_then_group(&file, &metrics, first, group).await;

    assert_eq!(
        done(first.expect("the first change")).name().as_str(),
        "First"
    );
    for (outcome, pet) in group.into_iter().zip(&pets[1..]) {
        let changed = done(outcome.expect("a change of the group"));
        assert_eq!(changed.name().as_str(), "Renamed");
        assert_eq!(changed.version(), pet.version().next());
        // Answered after the commit: the next read finds it.
        assert_eq!(
            storage.pets.find(pet.id()).await.expect("find"),
            Some(changed)
        );
    }
    drop(storage);
    let ids: Vec<PetId> = pets.iter().map(Pet::id).collect();
    let restarted = after_a_restart(&file, &ids).await;
    for (found, pet) in restarted.iter().skip(1).zip(&pets[1..]) {
        let found = found.as_ref().expect("the pet");
        assert_eq!(
            (found.name().as_str(), found.version()),
            ("Renamed", pet.version().next())
        );
    }
    assert_eq!(
        restarted[0]
            .as_ref()
            .map(|pet| pet.name().as_str().to_owned()),
        Some("First".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_and_failed_changes_leave_the_rest_of_their_group_written() {
    let file = TestSqliteFile::new();
    let (storage, metrics) = open(&file);
    let names: Vec<String> = ["First", "Rex", "Held", "Tom", "Stale", "Poisoned", "Felix"]
        .map(str::to_owned)
        .to_vec();
    let pets = created(&storage.pets, &names).await;
    let [first, rex, held, tom, stale, poisoned, felix] = &pets[..] else {
        unreachable!()
    };
    // An order holds `held`: its status is the order's, a change of it is refused.
    orders(&storage)
        .place(&staff(), NewOrder::new(held.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    connect(&file)
        .batch_execute(
            "CREATE TRIGGER refuse_poison BEFORE UPDATE ON pets WHEN NEW.name = 'Poison' \
             BEGIN SELECT RAISE(ABORT, 'poisoned pet'); END;",
        )
        .expect("trigger");
    let missing = PetId::new(9_999);
    let older = Some(VersionCondition::OneOf(vec![stale.version().next()]));
    let group = vec![
        change_of(&storage, rex.id(), rename("Rex 2"), None),
        change_of(&storage, held.id(), set_status(PetStatus::Available), None),
        change_of(&storage, missing, rename("Nobody"), None),
        change_of(&storage, tom.id(), rename("Tom 2"), None),
        change_of(&storage, stale.id(), rename("Stale 2"), older),
        change_of(&storage, poisoned.id(), rename("Poison"), None),
        change_of(&storage, felix.id(), rename("Felix 2"), None),
    ];

    let first_change = change_of(&storage, first.id(), rename("First 2"), None);
    let (first_outcome, outcomes) = first_then_group(&file, &metrics, first_change, group).await;

    first_outcome.expect("the first change");
    let [rex_o, held_o, missing_o, tom_o, stale_o, poisoned_o, felix_o] = &outcomes[..] else {
        unreachable!()
    };
    assert!(
        matches!(held_o, Err(PetWriteError::Change(_))),
        "{held_o:?}"
    );
    assert!(
        matches!(missing_o, Err(PetWriteError::NotFound(id)) if *id == missing),
        "{missing_o:?}"
    );
    assert!(
        matches!(stale_o, Err(PetWriteError::Stale { .. })),
        "{stale_o:?}"
    );
    assert!(
        matches!(
            poisoned_o,
            Err(PetWriteError::Repository(RepositoryError::Unexpected(_)))
        ),
        "{poisoned_o:?}"
    );
    for (outcome, name) in [(rex_o, "Rex 2"), (tom_o, "Tom 2"), (felix_o, "Felix 2")] {
        let written = outcome.as_ref().expect(name);
        assert!(matches!(written, Written::Done(pet, _) if pet.name().as_str() == name));
    }
    drop(storage);
    let ids: Vec<PetId> = [rex, held, tom, stale, poisoned, felix]
        .map(Pet::id)
        .to_vec();
    let found: Vec<(String, PetStatus)> = after_a_restart(&file, &ids)
        .await
        .into_iter()
        .map(|pet| {
            let pet = pet.expect("the pet");
            (pet.name().as_str().to_owned(), pet.status())
        })
        .collect();
    let expected = [
        ("Rex 2", PetStatus::Available),
        ("Held", PetStatus::Pending),
        ("Tom 2", PetStatus::Available),
        ("Stale", PetStatus::Available),
        ("Poisoned", PetStatus::Available),
        ("Felix 2", PetStatus::Available),
    ]
    .map(|(name, status)| (name.to_owned(), status));
    assert_eq!(found, expected);
}

/// A store where `trap` (SQL run on its file) fails one write, and its pets `names`, renamed
/// in one group (each to its name and " 2") after a first change that commits alone: what
/// the group's changes were answered, once it is certain none of them was written.
async fn a_group_renamed_into(trap: &str, names: [&str; 5]) -> (Renamed, Vec<Change>) {
    let file = TestSqliteFile::new();
    let (storage, metrics) = open(&file);
    let names = names.map(str::to_owned);
    let pets = created(&storage.pets, &names).await;
    connect(&file).batch_execute(trap).expect("the trap");
    let group = pets[1..]
        .iter()
        .map(|pet| {
            let name = format!("{} 2", pet.name().as_str());
            change_of(&storage, pet.id(), rename(&name), None)
        })
        .collect();
    let first = change_of(&storage, pets[0].id(), rename("First 2"), None);

    let (first, outcomes) = first_then_group(&file, &metrics, first, group).await;

    first.expect("the first change, committed alone");
    for pet in &pets[1..] {
        let found = storage.pets.find(pet.id()).await.expect("find");
        assert_eq!(found.as_ref(), Some(pet), "nothing of the group is written");
    }
    (
        Renamed {
            _file: file,
            storage,
            pets,
        },
        outcomes,
    )
}

/// The store [`a_group_renamed_into`] made, and its pets as they were created.
struct Renamed {
    _file: TestSqliteFile,
    storage: Storage,
    pets: Vec<Pet>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_whose_commit_fails_answers_every_change_with_the_failure_and_writes_none() {
    // A row that breaks a deferred foreign key: every statement succeeds, the COMMIT fails.
    let trap = "CREATE TABLE doom_parent (id INTEGER PRIMARY KEY); \
                CREATE TABLE doom (parent INTEGER REFERENCES doom_parent (id) \
                    DEFERRABLE INITIALLY DEFERRED); \
                CREATE TRIGGER doom_at_commit AFTER UPDATE ON pets WHEN NEW.name = 'Doomed 2' \
                BEGIN INSERT INTO doom (parent) VALUES (1); END;";
    let names = ["First", "Rex", "Tom", "Doomed", "Felix"];

    let (_, outcomes) = a_group_renamed_into(trap, names).await;

    for outcome in &outcomes {
        assert!(
            matches!(
                outcome,
                Err(PetWriteError::Repository(RepositoryError::Unexpected(_)))
            ),
            "{outcomes:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_ends_the_transaction_fails_its_group_and_nothing_of_it_is_written() {
    // RAISE(ROLLBACK) ends the whole transaction, as SQLite does on some I/O failures.
    let trap = "CREATE TRIGGER end_it BEFORE UPDATE ON pets WHEN NEW.name = 'Ender 2' \
                BEGIN SELECT RAISE(ROLLBACK, 'the transaction ends here'); END;";
    let names = ["First", "Rex", "Ender", "Felix", "Polly"];

    let (
        Renamed {
            _file,
            storage,
            pets,
        },
        outcomes,
    ) = a_group_renamed_into(trap, names).await;

    for outcome in &outcomes {
        assert!(
            matches!(outcome, Err(PetWriteError::Repository(_))),
            "{outcomes:?}"
        );
    }
    // The writer goes on: the next write commits.
    let after = pet_service(&storage)
        .update_pet(pets[1].id(), rename("Rex 3"), None, None)
        .await
        .map(done)
        .expect("a change after the failed group");
    assert_eq!(
        storage.pets.find(after.id()).await.expect("find"),
        Some(after)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_changes_from_one_version_in_one_group_exactly_one_is_written() {
    let file = TestSqliteFile::new();
    let (storage, metrics) = open(&file);
    let names: Vec<String> = ["First", "Rex"].map(str::to_owned).to_vec();
    let pets = created(&storage.pets, &names).await;
    let rex = &pets[1];
    let group = (0..20)
        .map(|n| {
            let condition = Some(VersionCondition::OneOf(vec![rex.version()]));
            change_of(&storage, rex.id(), rename(&format!("Rex {n}")), condition)
        })
        .collect();

    let first = change_of(&storage, pets[0].id(), rename("First 2"), None);
    let (_, outcomes) = first_then_group(&file, &metrics, first, group).await;

    let (written, refused): (Vec<_>, Vec<_>) = outcomes.iter().partition(|outcome| outcome.is_ok());
    assert!(
        refused
            .iter()
            .all(|outcome| matches!(outcome, Err(PetWriteError::Stale { .. }))),
        "{refused:?}"
    );
    let [Ok(Written::Done(winner, _))] = written[..] else {
        panic!("not exactly one written: {written:?}")
    };
    let found = storage.pets.find(rex.id()).await.expect("find");
    assert_eq!(found.as_ref(), Some(winner));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orders_placed_together_are_all_written_and_a_pet_is_sold_once() {
    let file = TestSqliteFile::new();
    let (storage, metrics) = open(&file);
    let names: Vec<String> = (0..8).map(|n| format!("Pet {n}")).collect();
    let pets = created(&storage.pets, &names).await;
    let place = |id: PetId| -> Pending<Result<Written<petstore_domain::Order>, OrderError>> {
        let service = orders(&storage);
        Box::pin(async move {
            service
                .place(&staff(), NewOrder::new(id, OrderQuantity::ONE), None)
                .await
        })
    };
    // Every pet once, and the last one a second time (8 orders of one key: under its limit
    // of open orders, which counts those of the group before it).
    let mut group: Vec<_> = pets[1..].iter().map(|pet| place(pet.id())).collect();
    group.push(place(pets[7].id()));

    let (first, outcomes) = first_then_group(&file, &metrics, place(pets[0].id()), group).await;

    first.expect("the first order");
    for (outcome, pet) in outcomes.iter().zip(&pets[1..7]) {
        match outcome {
            Ok(Written::Done(order, _)) => assert_eq!(order.pet_id(), pet.id()),
            other => panic!("an order of the group: {other:?}"),
        }
    }
    let last_two = &outcomes[6..];
    let placed = last_two.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!(placed, 1, "{last_two:?}");
    assert!(
        last_two
            .iter()
            .any(|outcome| matches!(outcome, Err(OrderError::Conflict(_)))),
        "{last_two:?}"
    );
    drop(storage);
    let ids: Vec<PetId> = pets.iter().map(Pet::id).collect();
    for pet in after_a_restart(&file, &ids).await {
        assert_eq!(pet.expect("the pet").status(), PetStatus::Pending);
    }
}
