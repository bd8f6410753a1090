//! The event feed's contract, written once and run against every adapter (memory, a SQLite file,
//! a PostgreSQL database of its own per test): every committed change has its event, in commit
//! order, with the resource as it was after the change; a refused change has none; a key reads
//! the pet and category events and only its own orders' events; the purge deletes the oldest
//! and a position before them is gone.

mod common;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{done, new_pet, Fixture};
use futures_util::future::join_all;
use petstore_application::{
    FeedQuery, FeedReadError, Fingerprint, OrderService, PetService, RecordPlan, StoredResponse,
    SystemClock, Written,
};
use petstore_domain::{
    Caller, CategoryName, EventSubject, EventType, EventTypes, FeedEntry, FeedPosition,
    IdempotencyKey, KeyId, KeyScope, NewOrder, OrderAction, OrderQuantity, Patch, PetChange,
    PetChangeFields, PetName, VisibleOrders,
};
use petstore_test_database::eventually;

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    every_change_has_its_event_in_commit_order_with_the_resource_after_it,
    a_refused_or_empty_change_writes_no_event,
    a_key_reads_only_its_own_orders_events_and_the_staff_read_all,
    pages_continue_after_their_last_position_and_filter_by_type,
    concurrent_creates_each_have_exactly_one_event_in_position_order,
    the_purge_deletes_the_oldest_and_a_position_before_them_is_gone,
    a_create_answered_from_its_record_writes_no_second_event,
);

fn key(digit: char) -> KeyId {
    KeyId::parse(&digit.to_string().repeat(32)).expect("a key id")
}

fn staff() -> Caller {
    Caller::new(key('5'), KeyScope::Store)
}

fn query(after: FeedPosition, types: EventTypes, visible: VisibleOrders) -> FeedQuery {
    FeedQuery {
        after: (after != FeedPosition::START).then_some(after),
        types,
        visible,
        max: 1_000,
    }
}

/// Waits until every committed event is readable: on PostgreSQL an event is read only once
/// every transaction older than its own ended (other tests' too, in the same cluster).
async fn settled(fixture: &Fixture) {
    eventually(
        Duration::from_secs(10),
        "every committed event readable",
        async || match fixture.events().held_back_since().await {
            Ok(None) => Ok(()),
            other => Err(other),
        },
    )
    .await;
}

async fn all_events(fixture: &Fixture) -> Vec<FeedEntry> {
    settled(fixture).await;
    fixture
        .events()
        .read(query(
            FeedPosition::START,
            EventTypes::EVERY,
            VisibleOrders::All,
        ))
        .await
        .expect("the feed reads")
        .entries
}

fn types(entries: &[FeedEntry]) -> Vec<&'static str> {
    entries
        .iter()
        .map(|entry| entry.event.event_type().as_str())
        .collect()
}

fn rename(name: &str) -> PetChange {
    PetChange::new(PetChangeFields {
        name: Patch::Set(PetName::parse(name).expect("a name")),
        ..Default::default()
    })
    .expect("a change")
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).expect("ms fit"))
        .expect("after the epoch")
}

async fn every_change_has_its_event_in_commit_order_with_the_resource_after_it(fixture: Fixture) {
    let before = now_ms();
    let pets = PetService::new(fixture.repo_arc(), Arc::new(SystemClock));
    let orders = OrderService::new(fixture.orders_arc(), Arc::new(SystemClock));
    let pet = done(
        fixture
            .repo()
            .create(new_pet("Rex", 1, None), None)
            .await
            .expect("create"),
    );
    let renamed = done(
        pets.update_pet(pet.id(), rename("Max"), None, None)
            .await
            .expect("rename"),
    );
    let placed = done(
        orders
            .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
            .await
            .expect("place"),
    );
    let cancelled = done(
        orders
            .act(&staff(), placed.id(), OrderAction::Cancel, None)
            .await
            .expect("cancel"),
    );
    let categories = fixture.categories_arc();
    let dogs = done(
        categories
            .create(CategoryName::parse("Dogs").expect("a name"), None)
            .await
            .expect("create a category"),
    );
    categories
        .remove(dogs.id(), 1)
        .await
        .expect("remove the category");
    let removed = pets.remove_pet(pet.id(), None).await.expect("remove");

    let events = all_events(&fixture).await;
    assert_eq!(
        types(&events),
        [
            "pet.created",
            "pet.updated",
            "pet.updated",
            "order.placed",
            "order.cancelled",
            "pet.updated",
            "category.created",
            "category.removed",
            "pet.removed",
        ],
        "{}",
        fixture.name()
    );
    let positions: Vec<FeedPosition> = events.iter().map(|entry| entry.position).collect();
    assert!(
        positions.windows(2).all(|pair| pair[0] < pair[1]),
        "{positions:?}"
    );
    let ids: std::collections::HashSet<&str> = events
        .iter()
        .map(|entry| entry.event.id().as_str())
        .collect();
    assert_eq!(ids.len(), events.len(), "every event has an id of its own");
    assert!(events
        .iter()
        .all(|entry| entry.event.occurred_at_ms() >= before - 1_000
            && entry.event.occurred_at_ms() <= now_ms() + 1_000));

    assert_eq!(events[0].event.subject(), &EventSubject::Pet(pet));
    assert_eq!(events[1].event.subject(), &EventSubject::Pet(renamed));
    assert_eq!(events[3].event.subject(), &EventSubject::Order(placed));
    assert_eq!(events[4].event.subject(), &EventSubject::Order(cancelled));
    assert_eq!(events[7].event.subject(), &EventSubject::Category(dogs));
    assert_eq!(events[8].event.subject(), &EventSubject::Pet(removed));
}

async fn a_refused_or_empty_change_writes_no_event(fixture: Fixture) {
    let pets = PetService::new(fixture.repo_arc(), Arc::new(SystemClock));
    let orders = OrderService::new(fixture.orders_arc(), Arc::new(SystemClock));
    let pet = done(
        fixture
            .repo()
            .create(new_pet("Rex", 1, None), None)
            .await
            .expect("create"),
    );
    // The same name again changes nothing, so nothing is written.
    done(
        pets.update_pet(pet.id(), rename("Rex"), None, None)
            .await
            .expect("an empty change"),
    );
    orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .expect("place");
    // Taken by the order: refused, in the transaction, after the pet was read.
    orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .expect_err("the pet is taken");
    pets.remove_pet(pet.id(), None)
        .await
        .expect_err("a pet with an open order stays");
    assert_eq!(
        types(&all_events(&fixture).await),
        ["pet.created", "pet.updated", "order.placed"],
        "{}",
        fixture.name()
    );
}

async fn a_key_reads_only_its_own_orders_events_and_the_staff_read_all(fixture: Fixture) {
    let orders = OrderService::new(fixture.orders_arc(), Arc::new(SystemClock));
    let (alice, bob) = (
        Caller::new(key('a'), KeyScope::Write),
        Caller::new(key('b'), KeyScope::Write),
    );
    for caller in [&alice, &bob] {
        let pet = done(
            fixture
                .repo()
                .create(new_pet("Rex", 1, None), None)
                .await
                .expect("create"),
        );
        orders
            .place(caller, NewOrder::new(pet.id(), OrderQuantity::ONE), None)
            .await
            .expect("place");
    }
    settled(&fixture).await;
    let read = |visible: VisibleOrders| {
        let feed = fixture.events();
        async move {
            feed.read(query(FeedPosition::START, EventTypes::EVERY, visible))
                .await
                .expect("the feed reads")
                .entries
        }
    };
    let seen_by_alice = read(alice.visible()).await;
    let owners: Vec<_> = seen_by_alice
        .iter()
        .filter_map(|entry| match entry.event.subject() {
            EventSubject::Order(order) => Some(order.placed_by().cloned()),
            _ => None,
        })
        .collect();
    assert_eq!(owners, [Some(key('a'))], "{}", fixture.name());
    assert_eq!(
        types(&seen_by_alice),
        [
            "pet.created",
            "pet.updated",
            "order.placed",
            "pet.created",
            "pet.updated"
        ]
    );
    assert_eq!(read(VisibleOrders::All).await.len(), 6);
}

async fn pages_continue_after_their_last_position_and_filter_by_type(fixture: Fixture) {
    for n in 0..5 {
        fixture
            .repo()
            .create(new_pet(&format!("Pet {n}"), 1, None), None)
            .await
            .expect("create");
    }
    settled(&fixture).await;
    let feed = fixture.events();
    let first = feed
        .read(FeedQuery {
            max: 2,
            ..query(FeedPosition::START, EventTypes::EVERY, VisibleOrders::All)
        })
        .await
        .expect("first page")
        .entries;
    let rest = feed
        .read(query(
            first[1].position,
            EventTypes::EVERY,
            VisibleOrders::All,
        ))
        .await
        .expect("the rest")
        .entries;
    assert_eq!((first.len(), rest.len()), (2, 3), "{}", fixture.name());
    let names = |entries: &[FeedEntry]| -> Vec<String> {
        entries
            .iter()
            .map(|entry| match entry.event.subject() {
                EventSubject::Pet(pet) => pet.name().as_str().to_owned(),
                other => panic!("not a pet: {other:?}"),
            })
            .collect()
    };
    assert_eq!(
        [names(&first), names(&rest)].concat(),
        ["Pet 0", "Pet 1", "Pet 2", "Pet 3", "Pet 4"]
    );
    let only_removals = feed
        .read(query(
            FeedPosition::START,
            EventTypes::parse_list("pet.removed,order.*").expect("types"),
            VisibleOrders::All,
        ))
        .await
        .expect("filtered");
    assert!(only_removals.entries.is_empty());
    assert_eq!(
        feed.read(query(
            FeedPosition::START,
            EventTypes::parse_list("pet.created").expect("types"),
            VisibleOrders::All,
        ))
        .await
        .expect("filtered")
        .entries
        .len(),
        5
    );
}

async fn concurrent_creates_each_have_exactly_one_event_in_position_order(fixture: Fixture) {
    let repo = fixture.repo_arc();
    let created = join_all((0..48).map(|n| {
        let repo = Arc::clone(&repo);
        async move {
            done(
                repo.create(new_pet(&format!("Racer {n}"), 1, None), None)
                    .await
                    .expect("create"),
            )
        }
    }))
    .await;
    let events = all_events(&fixture).await;
    let mut event_ids: Vec<i64> = events
        .iter()
        .map(|entry| match entry.event.subject() {
            EventSubject::Pet(pet) => pet.id().get(),
            other => panic!("not a pet: {other:?}"),
        })
        .collect();
    // Pets get increasing ids in the order they commit: so do their events' positions.
    assert!(
        event_ids.windows(2).all(|pair| pair[0] < pair[1]),
        "{}: {event_ids:?}",
        fixture.name()
    );
    let mut pet_ids: Vec<i64> = created.iter().map(|pet| pet.id().get()).collect();
    pet_ids.sort_unstable();
    event_ids.sort_unstable();
    assert_eq!(event_ids, pet_ids);
    assert!(events
        .iter()
        .all(|entry| entry.event.event_type() == EventType::PetCreated));
}

async fn the_purge_deletes_the_oldest_and_a_position_before_them_is_gone(fixture: Fixture) {
    for n in 0..5 {
        fixture
            .repo()
            .create(new_pet(&format!("Old {n}"), 1, None), None)
            .await
            .expect("create");
    }
    let feed = fixture.events();
    let old = all_events(&fixture).await;
    // Nothing is older than an instant before them all.
    assert_eq!(feed.purge(0, 100).await.expect("purge"), 0);
    let cutoff = now_ms() + 1;
    assert_eq!(
        feed.purge(cutoff, 2).await.expect("purge"),
        2,
        "{}",
        fixture.name()
    );
    assert_eq!(feed.purge(cutoff, 100).await.expect("purge"), 3);

    let before_purged = feed
        .read(query(
            old[1].position,
            EventTypes::EVERY,
            VisibleOrders::All,
        ))
        .await;
    assert!(
        matches!(before_purged, Err(FeedReadError::Gone)),
        "{}",
        fixture.name()
    );
    // A position before every event is before the purged ones too; no position reads on
    // from where the purged ones ended.
    let from_start = feed
        .read(FeedQuery {
            after: Some(FeedPosition::START),
            ..query(FeedPosition::START, EventTypes::EVERY, VisibleOrders::All)
        })
        .await;
    assert!(matches!(from_start, Err(FeedReadError::Gone)));
    let empty = feed
        .read(query(
            FeedPosition::START,
            EventTypes::EVERY,
            VisibleOrders::All,
        ))
        .await
        .expect("no position reads on");
    assert!(empty.entries.is_empty());
    assert_eq!(empty.after, old[4].position, "{}", fixture.name());
    // A reader that had read them all missed nothing: it reads on.
    fixture
        .repo()
        .create(new_pet("New", 1, None), None)
        .await
        .expect("create");
    settled(&fixture).await;
    let after_all = feed
        .read(query(
            old[4].position,
            EventTypes::EVERY,
            VisibleOrders::All,
        ))
        .await
        .expect("reads on");
    assert_eq!(types(&after_all.entries), ["pet.created"]);
}

async fn a_create_answered_from_its_record_writes_no_second_event(fixture: Fixture) {
    let plan = || RecordPlan {
        owner: key('7'),
        key: IdempotencyKey::parse("create-once").expect("a key"),
        fingerprint: Fingerprint([7; 32]),
        stored_at: now_ms() / 1_000,
        expired_before: now_ms() / 1_000 - 86_400,
        render: |_| StoredResponse {
            status: 201,
            headers: Vec::new(),
            body: b"{}".to_vec(),
        },
    };
    let first = fixture
        .repo()
        .create(new_pet("Once", 1, None), Some(plan()))
        .await
        .expect("create");
    assert!(matches!(first, Written::Done(..)));
    let again = fixture
        .repo()
        .create(new_pet("Once", 1, None), Some(plan()))
        .await
        .expect("the retry");
    assert!(matches!(again, Written::Earlier(_)), "{}", fixture.name());
    assert_eq!(
        types(&all_events(&fixture).await),
        ["pet.created"],
        "{}",
        fixture.name()
    );
}
