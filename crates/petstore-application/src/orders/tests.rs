//! The order use cases against a mocked repository: the transaction the repository is asked
//! to run is run here over a mocked transaction, so each test sees exactly what a use case
//! reads and writes, and that nothing is written when a rule refuses.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{
    CategoryId, NewOrder, NewPet, Order, OrderAction, OrderConflict, OrderFilter, OrderId,
    OrderListQuery, OrderQuantity, OrderStatus, PageLimit, Pet, PetId, PetName, PetStatus,
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

fn order(status: OrderStatus) -> Order {
    order_with_id(3, status)
}

fn order_with_id(id: i64, status: OrderStatus) -> Order {
    Order::restore(
        OrderId::new(id),
        PetId::new(7),
        OrderQuantity::ONE,
        status,
        None,
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
        .returning(move |work| {
            let mut tx = tx.lock().unwrap().take().expect("one transaction");
            work(&mut tx)
        });
    repository
}

fn service(repository: MockOrderRepository) -> OrderService {
    OrderService::new(Arc::new(repository), Arc::new(clock()))
}

#[tokio::test]
async fn placing_reserves_the_pet_and_stores_the_order_in_one_transaction() {
    let mut tx = MockStoreTransaction::new();
    let mut sequence = mockall::Sequence::new();
    tx.expect_pet_for_update()
        .with(eq(PetId::new(7)))
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(Some(pet(PetStatus::Available))));
    tx.expect_save_pet_status()
        .withf(|pet: &Pet| pet.status() == PetStatus::Pending)
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(()));
    tx.expect_insert_order()
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|new| Ok(new.into_order(OrderId::new(3))));

    let placed = service(repository_running(tx))
        .place(NewOrder::new(PetId::new(7), OrderQuantity::ONE))
        .await
        .unwrap();
    assert_eq!(placed, order(OrderStatus::Placed));
}

#[tokio::test]
async fn an_order_for_a_pet_that_is_not_available_is_a_conflict_and_writes_nothing() {
    for status in [PetStatus::Pending, PetStatus::Sold] {
        let mut tx = MockStoreTransaction::new();
        tx.expect_pet_for_update()
            .returning(move |_| Ok(Some(pet(status))));
        // No save or insert is expected: the mock fails the test if one happens.
        let err = service(repository_running(tx))
            .place(NewOrder::new(PetId::new(7), OrderQuantity::ONE))
            .await
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
    tx.expect_pet_for_update().returning(|_| Ok(None));
    let err = service(repository_running(tx))
        .place(NewOrder::new(PetId::new(7), OrderQuantity::ONE))
        .await
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
    tx.expect_save_pet_status()
        .withf(|pet: &Pet| pet.status() == PetStatus::Sold)
        .times(1)
        .returning(|_| Ok(()));

    let delivered = service(repository_running(tx))
        .act(OrderId::new(3), OrderAction::Deliver)
        .await
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
    // No save_pet_status expected.
    let approved = service(repository_running(tx))
        .act(OrderId::new(3), OrderAction::Approve)
        .await
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
        .act(OrderId::new(3), OrderAction::Cancel)
        .await
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
        .act(OrderId::new(3), OrderAction::Cancel)
        .await
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
        .with(eq(filter), eq(None), eq(3))
        .returning(|_, _, _| {
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
    let page = service(repository).list(query).await.unwrap();
    assert_eq!(page.orders.len(), 2);
    assert_eq!(page.next_after, Some(OrderId::new(4)));
}
