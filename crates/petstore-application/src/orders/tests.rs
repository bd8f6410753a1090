//! The order use cases against a mocked repository: the transaction the repository is asked
//! to run is run here over a mocked transaction, so each test sees exactly what a use case
//! reads and writes, and that nothing is written when a rule refuses. Who asks matters: a
//! customer's key (`write`, `read`) sees its own orders only, the staff's (`store`) every one.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{
    Caller, CategoryId, KeyId, KeyScope, NewOrder, NewPet, OpenOrderLimit, Order, OrderAction,
    OrderConflict, OrderFilter, OrderId, OrderListQuery, OrderQuantity, OrderStatus, PageLimit,
    Pet, PetId, PetName, PetStatus, TooManyOpenOrders, VisibleOrders,
};

use super::*;
use crate::{MockClock, RepositoryError};

const NOW: i64 = 1_800_000_000;

fn pet(status: PetStatus) -> Pet {
    NewPet::new(
        PetName::parse("Rex").unwrap(),
        CategoryId::parse(1).unwrap(),
        Some(status),
    )
    .into_pet(PetId::new(7))
}

/// The customer's key in these tests.
fn alice() -> KeyId {
    KeyId::parse(&"a".repeat(32)).unwrap()
}

/// Another customer's key.
fn bob() -> KeyId {
    KeyId::parse(&"b".repeat(32)).unwrap()
}

fn customer() -> Caller {
    Caller::new(alice(), KeyScope::Write)
}

fn staff() -> Caller {
    Caller::new(KeyId::parse(&"5".repeat(32)).unwrap(), KeyScope::Store)
}

/// The customer's order 3.
fn order(status: OrderStatus) -> Order {
    order_with_id(3, status)
}

fn order_with_id(id: i64, status: OrderStatus) -> Order {
    order_of(id, status, Some(alice()))
}

fn order_of(id: i64, status: OrderStatus, placed_by: Option<KeyId>) -> Order {
    Order::restore(
        OrderId::new(id),
        PetId::new(7),
        OrderQuantity::ONE,
        status,
        None,
        placed_by,
    )
}

fn clock() -> MockClock {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(UNIX_EPOCH + Duration::from_secs(NOW as u64));
    clock
}

/// A repository that runs the use case's work once over `tx`.
fn repository_running(tx: MockStoreTransaction) -> MockOrderRepository {
    let mut repository = MockOrderRepository::new();
    let tx = std::sync::Mutex::new(Some(tx));
    repository
        .expect_in_transaction()
        .times(1)
        .returning(move |work, _| {
            let mut tx = tx.lock().unwrap().take().expect("one transaction");
            work(&mut tx).map(|order| Written::Done(order, None))
        });
    repository
}

/// The order of a write made without an idempotency key.
fn done(written: Written<Order>) -> Order {
    written.done().expect("carried out")
}

fn service(repository: MockOrderRepository) -> OrderService {
    OrderService::new(Arc::new(repository), Arc::new(clock()))
}

#[tokio::test]
async fn placing_reserves_the_pet_and_stores_the_order_in_one_transaction() {
    let mut tx = MockStoreTransaction::new();
    let mut sequence = mockall::Sequence::new();
    tx.expect_open_orders_for_update()
        .with(eq(alice()))
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(9));
    tx.expect_pet_for_update()
        .with(eq(PetId::new(7)))
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(Some(pet(PetStatus::Available))));
    tx.expect_save_pet()
        .withf(|pet: &Pet| pet.status() == PetStatus::Pending)
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(()));
    tx.expect_insert_order()
        .withf(|_, placed_by| *placed_by == alice())
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|new, placed_by| Ok(new.into_order(OrderId::new(3), placed_by.clone())));

    // Nine open orders: one below the default bound of ten.
    let placed = service(repository_running(tx))
        .place(
            &customer(),
            NewOrder::new(PetId::new(7), OrderQuantity::ONE),
            None,
        )
        .await
        .map(done)
        .unwrap();
    assert_eq!(placed, order(OrderStatus::Placed));
    assert_eq!(placed.placed_by(), Some(&alice()));
}

#[tokio::test]
async fn an_order_for_a_pet_that_is_not_available_is_a_conflict_and_writes_nothing() {
    for status in [PetStatus::Pending, PetStatus::Sold] {
        let mut tx = MockStoreTransaction::new();
        tx.expect_open_orders_for_update().returning(|_| Ok(0));
        tx.expect_pet_for_update()
            .returning(move |_| Ok(Some(pet(status))));
        // No save or insert is expected: the mock fails the test if one happens.
        let err = service(repository_running(tx))
            .place(
                &customer(),
                NewOrder::new(PetId::new(7), OrderQuantity::ONE),
                None,
            )
            .await
            .map(done)
            .unwrap_err();
        assert!(
            matches!(
                err,
                OrderError::Conflict(OrderConflict::PetNotAvailable { .. })
            ),
            "{err}"
        );
    }
}

#[tokio::test]
async fn an_order_for_an_unknown_pet_is_not_found() {
    let mut tx = MockStoreTransaction::new();
    tx.expect_open_orders_for_update().returning(|_| Ok(0));
    tx.expect_pet_for_update().returning(|_| Ok(None));
    let err = service(repository_running(tx))
        .place(
            &customer(),
            NewOrder::new(PetId::new(7), OrderQuantity::ONE),
            None,
        )
        .await
        .map(done)
        .unwrap_err();
    assert!(matches!(err, OrderError::PetNotFound(id) if id == PetId::new(7)));
}

#[tokio::test]
async fn delivering_sells_the_pet_and_dates_the_order_together() {
    let mut tx = MockStoreTransaction::new();
    tx.expect_order_for_update()
        .with(eq(OrderId::new(3)))
        .returning(|_| Ok(Some(order(OrderStatus::Approved))));
    tx.expect_pet_for_update()
        .with(eq(PetId::new(7)))
        .returning(|_| Ok(Some(pet(PetStatus::Pending))));
    tx.expect_save_order()
        .withf(|order: &Order| {
            order.status() == OrderStatus::Delivered && order.ship_date() == Some(NOW)
        })
        .times(1)
        .returning(|_| Ok(()));
    tx.expect_save_pet()
        .withf(|pet: &Pet| pet.status() == PetStatus::Sold)
        .times(1)
        .returning(|_| Ok(()));

    let delivered = service(repository_running(tx))
        .act(&staff(), OrderId::new(3), OrderAction::Deliver, None)
        .await
        .map(done)
        .unwrap();
    assert!(delivered.is_complete());
}

#[tokio::test]
async fn approving_leaves_the_pet_alone() {
    let mut tx = MockStoreTransaction::new();
    tx.expect_order_for_update()
        .returning(|_| Ok(Some(order(OrderStatus::Placed))));
    tx.expect_pet_for_update()
        .returning(|_| Ok(Some(pet(PetStatus::Pending))));
    tx.expect_save_order().times(1).returning(|_| Ok(()));
    // No save_pet expected.
    let approved = service(repository_running(tx))
        .act(&staff(), OrderId::new(3), OrderAction::Approve, None)
        .await
        .map(done)
        .unwrap();
    assert_eq!(approved.status(), OrderStatus::Approved);
}

#[tokio::test]
async fn a_move_the_life_cycle_forbids_is_a_conflict_and_writes_nothing() {
    let mut tx = MockStoreTransaction::new();
    tx.expect_order_for_update()
        .returning(|_| Ok(Some(order(OrderStatus::Delivered))));
    tx.expect_pet_for_update()
        .returning(|_| Ok(Some(pet(PetStatus::Sold))));
    let err = service(repository_running(tx))
        .act(&customer(), OrderId::new(3), OrderAction::Cancel, None)
        .await
        .map(done)
        .unwrap_err();
    assert!(
        matches!(err, OrderError::Conflict(OrderConflict::Order { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn storage_failures_pass_through_as_they_are() {
    let mut tx = MockStoreTransaction::new();
    tx.expect_order_for_update()
        .returning(|_| Err(RepositoryError::Unavailable("the database is down".into())));
    let err = service(repository_running(tx))
        .act(&customer(), OrderId::new(3), OrderAction::Cancel, None)
        .await
        .map(done)
        .unwrap_err();
    assert!(matches!(
        err,
        OrderError::Repository(RepositoryError::Unavailable(_))
    ));
}

#[tokio::test]
async fn listing_pages_by_asking_for_one_order_more() {
    let mut repository = MockOrderRepository::new();
    let filter = OrderFilter {
        status: Some(OrderStatus::Placed),
        pet_id: None,
    };
    repository
        .expect_list()
        .with(
            eq(VisibleOrders::PlacedBy(alice())),
            eq(filter),
            eq(None),
            eq(3),
        )
        .returning(|_, _, _, _| {
            Ok(vec![
                order(OrderStatus::Placed),
                order_with_id(4, OrderStatus::Placed),
                order_with_id(9, OrderStatus::Placed),
            ])
        });
    let query = OrderListQuery {
        filter,
        after: None,
        limit: PageLimit::parse(2).unwrap(),
    };
    let page = service(repository).list(&customer(), query).await.unwrap();
    assert_eq!(page.orders.len(), 2);
    assert_eq!(page.next_after, Some(OrderId::new(4)));
}

#[tokio::test]
async fn a_key_with_as_many_open_orders_as_the_bound_places_none_and_writes_nothing() {
    for (limit, open) in [(None, 10), (Some(3), 3), (Some(1), 5)] {
        let mut tx = MockStoreTransaction::new();
        tx.expect_open_orders_for_update()
            .with(eq(alice()))
            .times(1)
            .returning(move |_| Ok(open));
        // Neither the pet is read nor anything written.
        let mut service = service(repository_running(tx));
        if let Some(limit) = limit {
            service = service.with_open_order_limit(OpenOrderLimit::parse(limit).unwrap());
        }
        let expected = OpenOrderLimit::parse(limit.unwrap_or(10)).unwrap();
        let err = service
            .place(
                &customer(),
                NewOrder::new(PetId::new(7), OrderQuantity::ONE),
                None,
            )
            .await
            .map(done)
            .unwrap_err();
        assert!(
            matches!(err, OrderError::TooManyOpenOrders(TooManyOpenOrders { limit }) if limit == expected),
            "{err}"
        );
    }
}

#[tokio::test]
async fn the_staff_are_bound_too() {
    let mut tx = MockStoreTransaction::new();
    let staff_key = staff().key().clone();
    tx.expect_open_orders_for_update()
        .withf(move |key| *key == staff_key)
        .returning(|_| Ok(10));
    let err = service(repository_running(tx))
        .place(
            &staff(),
            NewOrder::new(PetId::new(7), OrderQuantity::ONE),
            None,
        )
        .await
        .map(done)
        .unwrap_err();
    assert!(matches!(err, OrderError::TooManyOpenOrders(_)), "{err}");
}

#[tokio::test]
async fn a_read_key_places_nothing_and_storage_is_not_asked() {
    // No expectation on the repository: any call fails the test.
    let reader = Caller::new(alice(), KeyScope::Read);
    let err = service(MockOrderRepository::new())
        .place(
            &reader,
            NewOrder::new(PetId::new(7), OrderQuantity::ONE),
            None,
        )
        .await
        .map(done)
        .unwrap_err();
    assert!(
        matches!(
            err,
            OrderError::Forbidden {
                needed: KeyScope::Write
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn only_the_staff_approve_and_deliver_and_a_refusal_reads_nothing() {
    for action in [OrderAction::Approve, OrderAction::Deliver] {
        for scope in [KeyScope::Read, KeyScope::Write] {
            let caller = Caller::new(alice(), scope);
            let err = service(MockOrderRepository::new())
                .act(&caller, OrderId::new(3), action, None)
                .await
                .map(done)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    OrderError::Forbidden {
                        needed: KeyScope::Store
                    }
                ),
                "{scope} {action:?}: {err}"
            );
        }
    }
    let reader = Caller::new(alice(), KeyScope::Read);
    let err = service(MockOrderRepository::new())
        .act(&reader, OrderId::new(3), OrderAction::Cancel, None)
        .await
        .map(done)
        .unwrap_err();
    assert!(
        matches!(
            err,
            OrderError::Forbidden {
                needed: KeyScope::Write
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_customer_cannot_cancel_another_keys_or_an_ownerless_order_and_it_is_not_found() {
    for owner in [Some(bob()), None] {
        let mut tx = MockStoreTransaction::new();
        let stored = order_of(3, OrderStatus::Placed, owner.clone());
        tx.expect_order_for_update()
            .returning(move |_| Ok(Some(stored.clone())));
        // Neither the pet is read nor anything written.
        let err = service(repository_running(tx))
            .act(&customer(), OrderId::new(3), OrderAction::Cancel, None)
            .await
            .map(done)
            .unwrap_err();
        assert!(
            matches!(err, OrderError::NotFound(id) if id == OrderId::new(3)),
            "{owner:?}: {err}"
        );
    }
}

#[tokio::test]
async fn the_staff_cancel_any_order_even_an_ownerless_one() {
    for owner in [Some(bob()), None] {
        let mut tx = MockStoreTransaction::new();
        let stored = order_of(3, OrderStatus::Approved, owner.clone());
        tx.expect_order_for_update()
            .returning(move |_| Ok(Some(stored.clone())));
        tx.expect_pet_for_update()
            .returning(|_| Ok(Some(pet(PetStatus::Pending))));
        tx.expect_save_order().times(1).returning(|_| Ok(()));
        tx.expect_save_pet()
            .withf(|pet: &Pet| pet.status() == PetStatus::Available)
            .times(1)
            .returning(|_| Ok(()));
        let cancelled = service(repository_running(tx))
            .act(&staff(), OrderId::new(3), OrderAction::Cancel, None)
            .await
            .map(done)
            .unwrap();
        assert_eq!(
            (cancelled.status(), cancelled.placed_by()),
            (OrderStatus::Cancelled, owner.as_ref())
        );
    }
}

#[tokio::test]
async fn a_key_gets_its_own_orders_and_the_staff_every_order() {
    let stored = |owner: Option<KeyId>| {
        let mut repository = MockOrderRepository::new();
        repository
            .expect_find()
            .with(eq(OrderId::new(3)))
            .returning(move |_| Ok(Some(order_of(3, OrderStatus::Placed, owner.clone()))));
        service(repository)
    };
    let reader = Caller::new(alice(), KeyScope::Read);
    for caller in [&customer(), &reader] {
        assert!(stored(Some(alice()))
            .get(caller, OrderId::new(3))
            .await
            .is_ok());
        for owner in [Some(bob()), None] {
            let err = stored(owner)
                .get(caller, OrderId::new(3))
                .await
                .unwrap_err();
            assert!(matches!(err, OrderError::NotFound(_)), "{err}");
        }
    }
    for owner in [Some(alice()), Some(bob()), None] {
        let got = stored(owner.clone())
            .get(&staff(), OrderId::new(3))
            .await
            .unwrap();
        assert_eq!(got.placed_by(), owner.as_ref());
    }
}

#[tokio::test]
async fn the_staff_list_every_order() {
    let mut repository = MockOrderRepository::new();
    repository
        .expect_list()
        .with(
            eq(VisibleOrders::All),
            eq(OrderFilter::default()),
            eq(None),
            eq(21),
        )
        .times(1)
        .returning(|_, _, _, _| Ok(vec![order_of(1, OrderStatus::Placed, None)]));
    let page = service(repository)
        .list(&staff(), OrderListQuery::default())
        .await
        .unwrap();
    assert_eq!(page.orders.len(), 1);
}
