//! The order repository contract, written once and run against every adapter (memory, a SQLite
//! file, a PostgreSQL database of its own per test): transactions that change an order and its
//! pet together or not at all, and that take turns on one pet.

mod common;

use std::sync::Arc;

use common::{new_pet, Fixture};
use futures_util::future::join_all;
use petstore_application::{OrderError, OrderService, OrderWork, RepositoryError, SystemClock};
use petstore_domain::{
    NewOrder, OrderAction, OrderConflict, OrderFilter, OrderId, OrderListQuery, OrderQuantity,
    OrderStatus, PageLimit, PetId, PetStatus,
};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    placing_reserves_the_pet_and_delivering_sells_it,
    cancelling_gives_the_pet_back_and_it_can_be_ordered_again,
    a_refused_order_changes_nothing,
    a_transaction_whose_work_fails_stores_none_of_its_writes,
    concurrent_orders_for_one_pet_get_exactly_one_success,
    orders_are_listed_by_id_with_filters,
);

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
        .create(new_pet("Rex", 1, None))
        .await
        .expect("create");
    let orders = service(&fixture);
    let placed = orders
        .place(NewOrder::new(pet.id(), OrderQuantity::ONE))
        .await
        .expect("place");
    assert_eq!(
        (placed.status(), placed.quantity(), placed.ship_date()),
        (OrderStatus::Placed, OrderQuantity::ONE, None)
    );
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Pending);
    assert_eq!(orders.get(placed.id()).await.expect("get"), placed);

    orders
        .act(placed.id(), OrderAction::Approve)
        .await
        .expect("approve");
    let delivered = orders
        .act(placed.id(), OrderAction::Deliver)
        .await
        .expect("deliver");
    assert!(delivered.is_complete() && delivered.ship_date().is_some());
    assert_eq!(orders.get(placed.id()).await.expect("get"), delivered);
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Sold);
}

async fn cancelling_gives_the_pet_back_and_it_can_be_ordered_again(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Tom", 1, None))
        .await
        .expect("create");
    let orders = service(&fixture);
    let first = orders
        .place(NewOrder::new(pet.id(), OrderQuantity::ONE))
        .await
        .expect("place");
    orders
        .act(first.id(), OrderAction::Cancel)
        .await
        .expect("cancel");
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Available);
    let second = orders
        .place(NewOrder::new(pet.id(), OrderQuantity::ONE))
        .await
        .expect("place again");
    assert!(second.id() > first.id());
}

async fn a_refused_order_changes_nothing(fixture: Fixture) {
    let sold = fixture
        .repo()
        .create(new_pet("Sold", 1, Some(PetStatus::Sold)))
        .await
        .expect("create");
    let orders = service(&fixture);
    let err = orders
        .place(NewOrder::new(sold.id(), OrderQuantity::ONE))
        .await
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
            .place(NewOrder::new(PetId::new(i64::MAX), OrderQuantity::ONE))
            .await,
        Err(OrderError::PetNotFound(_))
    ));
    let listed = orders
        .list(query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    assert_eq!(listed.orders, vec![], "no order was stored");

    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None))
        .await
        .expect("create");
    let placed = orders
        .place(NewOrder::new(pet.id(), OrderQuantity::ONE))
        .await
        .expect("place");
    let err = orders
        .act(placed.id(), OrderAction::Deliver)
        .await
        .expect_err("refused");
    assert!(
        matches!(err, OrderError::Conflict(OrderConflict::Order { .. })),
        "{err}"
    );
    assert_eq!(
        orders.get(placed.id()).await.expect("get").status(),
        OrderStatus::Placed
    );
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Pending);
    assert!(matches!(
        orders
            .act(OrderId::new(i64::MAX), OrderAction::Cancel)
            .await,
        Err(OrderError::NotFound(_))
    ));
}

/// The port's promise: `Err` from the work rolls back what it already wrote.
async fn a_transaction_whose_work_fails_stores_none_of_its_writes(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None))
        .await
        .expect("create");
    let pet_id = pet.id();
    let work: OrderWork = Box::new(move |tx| {
        let mut pet = tx.pet_for_update(pet_id)?.expect("the pet");
        pet.change_status(PetStatus::Pending)
            .expect("available -> pending");
        tx.save_pet_status(&pet)?;
        tx.insert_order(NewOrder::new(pet_id, OrderQuantity::ONE))?;
        Err(OrderError::Repository(RepositoryError::Unexpected(
            "changed my mind".into(),
        )))
    });
    let err = fixture
        .orders_arc()
        .in_transaction(work)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("storage failed"), "{err}");
    assert_eq!(status_of(&fixture, pet.id()).await, PetStatus::Available);
    let listed = service(&fixture)
        .list(query(OrderFilter::default(), None, 10))
        .await
        .expect("list");
    assert_eq!(listed.orders, vec![]);
}

async fn concurrent_orders_for_one_pet_get_exactly_one_success(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Popular", 1, None))
        .await
        .expect("create");
    let orders = service(&fixture);
    let new_order = NewOrder::new(pet.id(), OrderQuantity::ONE);
    let attempts = (0..20).map(|_| {
        let orders = orders.clone();
        tokio::spawn(async move { orders.place(new_order).await })
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
            .create(new_pet(&format!("P{n}"), 1, None))
            .await
            .expect("create");
        placed.push(
            orders
                .place(NewOrder::new(pet.id(), OrderQuantity::ONE))
                .await
                .expect("place"),
        );
    }
    orders
        .act(placed[1].id(), OrderAction::Cancel)
        .await
        .expect("cancel");
    let all = orders
        .list(query(OrderFilter::default(), None, 3))
        .await
        .expect("list");
    assert_eq!(
        all.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        placed[..3].iter().map(|o| o.id()).collect::<Vec<_>>()
    );
    let rest = orders
        .list(query(OrderFilter::default(), all.next_after, 3))
        .await
        .expect("list");
    assert_eq!(rest.orders.len(), 2);
    assert_eq!(rest.next_after, None);
    let cancelled = OrderFilter {
        status: Some(OrderStatus::Cancelled),
        pet_id: None,
    };
    let listed = orders.list(query(cancelled, None, 10)).await.expect("list");
    assert_eq!(
        listed.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        vec![placed[1].id()]
    );
    let of_pet = OrderFilter {
        status: None,
        pet_id: Some(placed[3].pet_id()),
    };
    let listed = orders.list(query(of_pet, None, 10)).await.expect("list");
    assert_eq!(
        listed.orders.iter().map(|o| o.id()).collect::<Vec<_>>(),
        vec![placed[3].id()]
    );
}
