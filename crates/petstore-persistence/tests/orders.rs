//! The order repository contract, written once and run against every adapter (memory, a SQLite
//! file, a PostgreSQL database of its own per test): transactions that change an order and its
//! pet together or not at all, and that take turns on one pet; orders kept as their key's, a
//! key's listing narrowed in the query, and the bound on a key's open orders, held under
//! concurrency; random order ids, drawn again when taken. Most of it asks as the staff, who see
//! everything.

mod common;

use std::sync::Arc;

use common::{done, new_pet, parse, Fixture};
use futures_util::future::join_all;
use petstore_application::{
    OrderError, OrderRepository, OrderService, OrderWork, RepositoryError, SystemClock,
};
use petstore_domain::{
    Caller, KeyId, KeyScope, NewOrder, OpenOrderLimit, OrderAction, OrderConflict, OrderFilter,
    OrderId, OrderListQuery, OrderQuantity, OrderStatus, PageLimit, PetId, PetStatus,
    TooManyOpenOrders,
};
use petstore_persistence::{OrderIds, PoolSettings, SqlStore};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    placing_reserves_the_pet_and_delivering_sells_it,
    cancelling_gives_the_pet_back_and_it_can_be_ordered_again,
    a_refused_order_changes_nothing,
    a_transaction_whose_work_fails_stores_none_of_its_writes,
    concurrent_orders_for_one_pet_get_exactly_one_success,
    orders_are_listed_by_id_with_filters,
    a_key_lists_and_gets_its_own_orders_in_full_pages,
    a_key_places_no_more_than_its_bound_of_open_orders,
    concurrent_orders_of_one_key_at_its_bound_get_exactly_one_success,
    placed_orders_get_random_ids_below_2_53,
);

/// On the databases: an id source given to a repository, rows written with SQL.
mod in_sql {
    use super::*;

    petstore_test_database::on_backends!(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
        [sqlite, postgres]
        an_order_drawing_a_taken_id_draws_again_in_the_same_write,
        an_order_finding_every_id_it_draws_taken_stores_nothing,
        orders_stored_with_sequential_ids_are_read_and_listed_beside_random_ones,
    );
}

/// A key whose id is `digit` 32 times.
fn key(digit: char) -> KeyId {
    KeyId::parse(&digit.to_string().repeat(32)).expect("a key id")
}

fn staff() -> Caller {
    Caller::new(key('5'), KeyScope::Store)
}

fn customer(digit: char) -> Caller {
    Caller::new(key(digit), KeyScope::Write)
}

fn service(fixture: &Fixture) -> OrderService {
    OrderService::new(fixture.orders_arc(), Arc::new(SystemClock))
}

/// A listing of `limit` orders matching `filter`, after `after`.
fn query(filter: OrderFilter, after: Option<OrderId>, limit: i64) -> OrderListQuery {
    OrderListQuery {
        filter,
        after,
        limit: PageLimit::parse(limit).expect("a page limit"),
    }
}

async fn status_of(fixture: &Fixture, id: PetId) -> PetStatus {
    fixture
        .repo()
        .find(id)
        .await
        .expect("find")
        .expect("the pet")
        .status()
}

async fn placing_reserves_the_pet_and_delivering_sells_it(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let orders = service(&fixture);
    let placed = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    assert_eq!(
        (placed.status(), placed.quantity(), placed.ship_date()),
        (OrderStatus::Placed, OrderQuantity::ONE, None)
    );
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Pending);
    assert_eq!(
        orders.get(&staff(), placed.id()).await.expect("get"),
        placed
    );

    orders
        .act(&staff(), placed.id(), OrderAction::Approve, None)
        .await
        .map(done)
        .expect("approve");
    let delivered = orders
        .act(&staff(), placed.id(), OrderAction::Deliver, None)
        .await
        .map(done)
        .expect("deliver");
    assert!(delivered.is_complete() && delivered.ship_date().is_some());
    assert_eq!(
        orders.get(&staff(), placed.id()).await.expect("get"),
        delivered
    );
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Sold);
}

async fn cancelling_gives_the_pet_back_and_it_can_be_ordered_again(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Tom", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let orders = service(&fixture);
    let first = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    orders
        .act(&staff(), first.id(), OrderAction::Cancel, None)
        .await
        .map(done)
        .expect("cancel");
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Available);
    let second = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place again");
    assert_ne!(second.id(), first.id());
}

async fn a_refused_order_changes_nothing(fixture: Fixture) {
    let sold = fixture
        .repo()
        .create(new_pet("Sold", 1, Some(PetStatus::Sold)), None)
        .await
        .map(done)
        .expect("create");
    let orders = service(&fixture);
    let err = orders
        .place(&staff(), NewOrder::new(sold.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect_err("refused");
    assert!(
        matches!(
            err,
            OrderError::Conflict(OrderConflict::PetNotAvailable { .. })
        ),
        "{err}"
    );
    assert!(matches!(
        orders
            .place(
                &staff(),
                NewOrder::new(PetId::new(i64::MAX), OrderQuantity::ONE),
                None
            )
            .await
            .map(done),
        Err(OrderError::PetNotFound(_))
    ));
    let listed = orders
        .list(&staff(), query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    assert_eq!(listed.orders, vec![], "no order was stored");

    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let placed = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    let err = orders
        .act(&staff(), placed.id(), OrderAction::Deliver, None)
        .await
        .map(done)
        .expect_err("refused");
    assert!(
        matches!(err, OrderError::Conflict(OrderConflict::Order { .. })),
        "{err}"
    );
    assert_eq!(
        orders
            .get(&staff(), placed.id())
            .await
            .expect("get")
            .status(),
        OrderStatus::Placed
    );
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Pending);
    assert!(matches!(
        orders
            .act(&staff(), OrderId::new(i64::MAX), OrderAction::Cancel, None)
            .await
            .map(done),
        Err(OrderError::NotFound(_))
    ));
}

/// The port's promise: `Err` from the work rolls back what it already wrote.
async fn a_transaction_whose_work_fails_stores_none_of_its_writes(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let pet_id = pet.id();
    let work: OrderWork = Box::new(move |tx| {
        let mut pet = tx.pet_for_update(pet_id)?.expect("the pet");
        pet.change_status(PetStatus::Pending)
            .expect("available -> pending");
        tx.save_pet(&pet)?;
        tx.insert_order(NewOrder::new(pet_id, OrderQuantity::ONE), &key('a'))?;
        Err(OrderError::Repository(RepositoryError::Unexpected(
            "changed my mind".into(),
        )))
    });
    let err = fixture
        .orders_arc()
        .in_transaction(work, None)
        .await
        .map(done)
        .expect_err("refused");
    assert!(err.to_string().contains("storage failed"), "{err}");
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Available);
    let listed = service(&fixture)
        .list(&staff(), query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    assert_eq!(listed.orders, vec![]);
}

async fn concurrent_orders_for_one_pet_get_exactly_one_success(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Popular", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let orders = service(&fixture);
    let new_order = NewOrder::new(pet.id(), OrderQuantity::ONE);
    let attempts = (0..20).map(|_| {
        let orders = orders.clone();
        tokio::spawn(async move { orders.place(&staff(), new_order, None).await.map(done) })
    });
    let outcomes: Vec<_> = join_all(attempts)
        .await
        .into_iter()
        .map(|joined| joined.expect("task"))
        .collect();
    let placed = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    let conflicts = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(OrderError::Conflict(_))))
        .count();
    assert_eq!((placed, conflicts), (1, 19), "{outcomes:?}");
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Pending);
}

async fn orders_are_listed_by_id_with_filters(fixture: Fixture) {
    let orders = service(&fixture);
    let mut placed = Vec::new();
    for n in 0..5 {
        let pet = fixture
            .repo()
            .create(new_pet(&format!("P{n}"), 1, None), None)
            .await
            .map(done)
            .expect("create");
        placed.push(
            orders
                .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
                .await
                .map(done)
                .expect("place"),
        );
    }
    orders
        .act(&staff(), placed[1].id(), OrderAction::Cancel, None)
        .await
        .map(done)
        .expect("cancel");
    let mut by_id: Vec<OrderId> = placed.iter().map(|o| o.id()).collect();
    by_id.sort();
    let all = orders
        .list(&staff(), query(OrderFilter::default(), None, 3))
        .await
        .expect("list");
    assert_eq!(
        all.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        by_id[..3]
    );
    let rest = orders
        .list(&staff(), query(OrderFilter::default(), all.next_after, 3))
        .await
        .expect("list");
    assert_eq!(
        rest.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        by_id[3..]
    );
    assert_eq!(rest.next_after, None);
    let cancelled = OrderFilter {
        status: Some(OrderStatus::Cancelled),
        pet_id: None,
    };
    let listed = orders
        .list(&staff(), query(cancelled, None, 10))
        .await
        .expect("list");
    assert_eq!(
        listed.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        vec![placed[1].id()]
    );
    let of_pet = OrderFilter {
        status: None,
        pet_id: Some(placed[3].pet_id()),
    };
    let listed = orders
        .list(&staff(), query(of_pet, None, 10))
        .await
        .expect("list");
    assert_eq!(
        listed.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        vec![placed[3].id()]
    );
}

/// `count` available pets.
async fn pets(fixture: &Fixture, count: usize) -> Vec<PetId> {
    let mut ids = Vec::new();
    for n in 0..count {
        let pet = fixture
            .repo()
            .create(new_pet(&format!("P{n}"), 1, None), None)
            .await
            .map(done)
            .expect("create");
        ids.push(pet.id());
    }
    ids
}

async fn a_key_lists_and_gets_its_own_orders_in_full_pages(fixture: Fixture) {
    let orders = service(&fixture);
    let (alice, bob) = (customer('a'), customer('b'));
    let mut mine = Vec::new();
    let mut theirs = Vec::new();
    // Interleaved ids: a page of Alice's filtered afterwards would come back short.
    for (n, pet) in pets(&fixture, 6).await.into_iter().enumerate() {
        let new = NewOrder::new(pet, OrderQuantity::ONE);
        if n % 2 == 0 {
            mine.push(
                orders
                    .place(&alice, new, None)
                    .await
                    .map(done)
                    .expect("place")
                    .id(),
            );
        } else {
            theirs.push(
                orders
                    .place(&bob, new, None)
                    .await
                    .map(done)
                    .expect("place")
                    .id(),
            );
        }
    }
    // Listings go by id.
    mine.sort();
    theirs.sort();
    let first = orders
        .list(&alice, query(OrderFilter::default(), None, 2))
        .await
        .expect("list");
    assert_eq!(
        first.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        mine[..2]
    );
    let rest = orders
        .list(&alice, query(OrderFilter::default(), first.next_after, 2))
        .await
        .expect("list");
    assert_eq!(
        rest.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        mine[2..]
    );
    assert_eq!(rest.next_after, None);
    let placed = OrderFilter {
        status: Some(OrderStatus::Placed),
        pet_id: None,
    };
    let of_bob = orders
        .list(&bob, query(placed, None, 10))
        .await
        .expect("list");
    assert_eq!(
        of_bob.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        theirs
    );
    let every = orders
        .list(&staff(), query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    assert_eq!(every.orders.len(), 6);

    let got = orders.get(&alice, mine[0]).await.expect("her own");
    assert_eq!(got.placed_by(), Some(&key('a')), "stored as hers");
    assert!(matches!(
        orders.get(&alice, theirs[0]).await,
        Err(OrderError::NotFound(_))
    ));
    assert!(matches!(
        orders
            .act(&alice, theirs[0], OrderAction::Cancel, None)
            .await
            .map(done),
        Err(OrderError::NotFound(_))
    ));
    assert_eq!(
        orders.get(&bob, theirs[0]).await.expect("his").status(),
        OrderStatus::Placed,
        "not cancelled"
    );
}

async fn a_key_places_no_more_than_its_bound_of_open_orders(fixture: Fixture) {
    let orders =
        service(&fixture).with_open_order_limit(OpenOrderLimit::parse(2).expect("a limit"));
    let (alice, bob) = (customer('a'), customer('b'));
    let pets = pets(&fixture, 5).await;
    let order = |n: usize| NewOrder::new(pets[n], OrderQuantity::ONE);
    let first = orders
        .place(&alice, order(0), None)
        .await
        .map(done)
        .expect("place");
    orders
        .place(&alice, order(1), None)
        .await
        .map(done)
        .expect("place");
    let refused = orders
        .place(&alice, order(2), None)
        .await
        .map(done)
        .expect_err("bound");
    assert!(
        matches!(refused, OrderError::TooManyOpenOrders(TooManyOpenOrders { limit }) if limit.get() == 2),
        "{refused}"
    );
    assert_eq!(status_of(&fixture, pets[2]).await, PetStatus::Available);
    // Another key has a bound of its own.
    orders
        .place(&bob, order(3), None)
        .await
        .map(done)
        .expect("place");
    // An approved order is no longer open.
    orders
        .act(&staff(), first.id(), OrderAction::Approve, None)
        .await
        .map(done)
        .expect("approve");
    let third = orders
        .place(&alice, order(2), None)
        .await
        .map(done)
        .expect("place");
    assert!(matches!(
        orders.place(&alice, order(4), None).await.map(done),
        Err(OrderError::TooManyOpenOrders(_))
    ));
    // Nor is a cancelled one.
    orders
        .act(&alice, third.id(), OrderAction::Cancel, None)
        .await
        .map(done)
        .expect("cancel");
    orders
        .place(&alice, order(4), None)
        .await
        .map(done)
        .expect("place");
}

/// A key one order below its bound orders ten pets at once: one order, nine refusals. The
/// count is taken in each placing transaction under the key's own turn. On PostgreSQL each
/// order's insert is slowed down before its commit, so that without that turn the others would
/// count while it is uncommitted (and all be placed).
async fn concurrent_orders_of_one_key_at_its_bound_get_exactly_one_success(fixture: Fixture) {
    if fixture.name() == "postgres" {
        use diesel::connection::SimpleConnection;
        use diesel::Connection;
        let mut pg = diesel::PgConnection::establish(fixture.url()).expect("connect");
        pg.batch_execute(
            "CREATE FUNCTION slow_order() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_sleep(0.05); RETURN NEW; END $$; \
             CREATE TRIGGER slow_order AFTER INSERT ON orders \
             FOR EACH ROW EXECUTE FUNCTION slow_order();",
        )
        .expect("slow down the order inserts");
    }
    let orders =
        service(&fixture).with_open_order_limit(OpenOrderLimit::parse(3).expect("a limit"));
    let alice = customer('a');
    let pets = pets(&fixture, 12).await;
    for pet in &pets[..2] {
        orders
            .place(&alice, NewOrder::new(*pet, OrderQuantity::ONE), None)
            .await
            .map(done)
            .expect("place");
    }
    let attempts = pets[2..].iter().map(|pet| {
        let (orders, alice, new) = (
            orders.clone(),
            alice.clone(),
            NewOrder::new(*pet, OrderQuantity::ONE),
        );
        tokio::spawn(async move { orders.place(&alice, new, None).await.map(done) })
    });
    let outcomes: Vec<_> = join_all(attempts)
        .await
        .into_iter()
        .map(|joined| joined.expect("task"))
        .collect();
    let placed = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    let refused = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(OrderError::TooManyOpenOrders(_))))
        .count();
    assert_eq!((placed, refused), (1, 9), "{outcomes:?}");
}

/// 2^53: JavaScript's numbers hold every integer below it exactly.
const JSON_SAFE_LIMIT: i64 = 1 << 53;

/// Order ids are random, so that one tells nothing about how many orders others place; from 1
/// to below 2^53, so that a client in JavaScript reads them exactly.
async fn placed_orders_get_random_ids_below_2_53(fixture: Fixture) {
    let orders = service(&fixture);
    let mut ids = Vec::new();
    for pet in pets(&fixture, 8).await {
        let placed = orders
            .place(&staff(), NewOrder::new(pet, OrderQuantity::ONE), None)
            .await
            .map(done)
            .expect("place");
        ids.push(placed.id().get());
    }
    assert!(
        ids.iter().all(|id| (1..JSON_SAFE_LIMIT).contains(id)),
        "{ids:?}"
    );
    assert!(
        ids.windows(2).all(|pair| pair[0].abs_diff(pair[1]) > 1),
        "consecutive ids: {ids:?}"
    );
    // Eight ids drawn uniformly below 2^53 are all below 2^32 with a chance of 2^-168.
    assert!(ids.iter().any(|&id| id >= 1 << 32), "small ids: {ids:?}");
}

/// The orders of the fixture's database, drawing their ids from `ids`.
fn orders_drawing(fixture: &Fixture, ids: OrderIds) -> OrderService {
    let store =
        SqlStore::build(&parse(fixture.url()), &PoolSettings::default()).expect("the store");
    let orders: Arc<dyn OrderRepository> = Arc::new(store.orders().with_order_ids(ids));
    OrderService::new(orders, Arc::new(SystemClock))
}

/// A second order drawing the first one's id draws again, inside its one write: no error, and
/// the pet is ordered once.
async fn an_order_drawing_a_taken_id_draws_again_in_the_same_write(fixture: Fixture) {
    let orders = orders_drawing(&fixture, OrderIds::in_turn(&[4242, 4242, 4242], 9999));
    let pets = pets(&fixture, 2).await;
    let first = orders
        .place(&staff(), NewOrder::new(pets[0], OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    let second = orders
        .place(&staff(), NewOrder::new(pets[1], OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place after a taken id");
    assert_eq!((first.id().get(), second.id().get()), (4242, 9999));
    let got = orders.get(&staff(), second.id()).await.expect("get");
    assert_eq!(got.pet_id(), pets[1]);
    assert_eq!(
        orders
            .get(&staff(), first.id())
            .await
            .expect("get")
            .pet_id(),
        pets[0],
        "the first order is left as it was"
    );
    assert_eq!(status_of(&fixture, pets[1]).await, PetStatus::Pending);
}

/// Draws are bounded: an order that finds every id taken fails, and its transaction stores
/// nothing (the pet stays available).
async fn an_order_finding_every_id_it_draws_taken_stores_nothing(fixture: Fixture) {
    let orders = orders_drawing(&fixture, OrderIds::in_turn(&[], 7));
    let pets = pets(&fixture, 2).await;
    orders
        .place(&staff(), NewOrder::new(pets[0], OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    let err = orders
        .place(&staff(), NewOrder::new(pets[1], OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect_err("every id taken");
    assert!(matches!(err, OrderError::Repository(_)), "{err}");
    assert_eq!(status_of(&fixture, pets[1]).await, PetStatus::Available);
}

/// Orders stored before ids were random (sequential, from the table's own counter) are found,
/// listed in id order with the new ones, and changed.
async fn orders_stored_with_sequential_ids_are_read_and_listed_beside_random_ones(
    fixture: Fixture,
) {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let pets = pets(&fixture, 3).await;
    let insert = format!(
        "UPDATE pets SET status = 'pending' WHERE id IN ({}, {}); \
         INSERT INTO orders (pet_id, quantity, status) VALUES ({}, 1, 'placed'); \
         INSERT INTO orders (pet_id, quantity, status) VALUES ({}, 1, 'placed');",
        pets[0], pets[1], pets[0], pets[1]
    );
    match parse(fixture.url()).sqlite_path() {
        Some(path) => diesel::SqliteConnection::establish(&path.to_string_lossy())
            .expect("open")
            .batch_execute(&insert),
        None => diesel::PgConnection::establish(fixture.url())
            .expect("connect")
            .batch_execute(&insert),
    }
    .expect("orders with the table's own ids");
    let orders = service(&fixture);
    let new = orders
        .place(&staff(), NewOrder::new(pets[2], OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    let listed = orders
        .list(&staff(), query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    let ids: Vec<i64> = listed.orders.iter().map(|o| o.id().get()).collect();
    assert_eq!(ids, [1, 2, new.id().get()]);
    let old = orders
        .act(&staff(), OrderId::new(2), OrderAction::Approve, None)
        .await
        .map(done)
        .expect("approve an old order");
    assert_eq!(
        (old.pet_id(), old.status()),
        (pets[1], OrderStatus::Approved)
    );
}
