//! The inventory contract, written once and run against every adapter (memory, a SQLite file,
//! PostgreSQL): every status counted, 0 included; creates counted at once; orders moving pets
//! between statuses; a removed pet never counted.

mod common;

use std::sync::Arc;

use common::{done, new_pet, Fixture};
use petstore_application::{OrderService, PetService, SystemClock};
use petstore_domain::{
    Caller, Inventory, KeyId, KeyScope, NewOrder, OrderAction, OrderQuantity, Pet, PetStatus,
};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    an_empty_store_has_every_status_at_zero,
    creates_are_counted_in_their_status,
    orders_move_pets_between_the_counts,
    a_removed_pet_is_never_counted,
);

fn staff() -> Caller {
    Caller::new(
        KeyId::parse(&"7".repeat(32)).expect("a key id"),
        KeyScope::Store,
    )
}

fn orders(fixture: &Fixture) -> OrderService {
    OrderService::new(fixture.orders_arc(), Arc::new(SystemClock))
}

async fn created(fixture: &Fixture, status: Option<PetStatus>) -> Pet {
    done(
        fixture
            .repo()
            .create(new_pet("Rex", 1, status), None)
            .await
            .expect("create"),
    )
}

async fn counts(fixture: &Fixture) -> [u64; 3] {
    let inventory = fixture.inventory().count_by_status().await.expect("count");
    PetStatus::ALL.map(|status| inventory.count(status))
}

async fn an_empty_store_has_every_status_at_zero(fixture: Fixture) {
    assert_eq!(
        fixture.inventory().count_by_status().await.expect("count"),
        Inventory::default()
    );
}

async fn creates_are_counted_in_their_status(fixture: Fixture) {
    for status in [
        None,
        Some(PetStatus::Available),
        Some(PetStatus::Sold),
        Some(PetStatus::Pending),
        Some(PetStatus::Sold),
        Some(PetStatus::Sold),
    ] {
        created(&fixture, status).await;
    }
    // [available, pending, sold]
    assert_eq!(counts(&fixture).await, [2, 1, 3]);
}

async fn orders_move_pets_between_the_counts(fixture: Fixture) {
    let rex = created(&fixture, None).await;
    let tom = created(&fixture, None).await;
    created(&fixture, None).await;
    let orders = orders(&fixture);
    let staff = staff();
    let place = |pet: &Pet| orders.place(&staff, NewOrder::new(pet.id(), OrderQuantity::ONE), None);

    let for_rex = done(place(&rex).await.expect("place"));
    let for_tom = done(place(&tom).await.expect("place"));
    assert_eq!(counts(&fixture).await, [1, 2, 0]);

    for action in [OrderAction::Approve, OrderAction::Deliver] {
        orders
            .act(&staff, for_rex.id(), action, None)
            .await
            .expect("approve, deliver");
    }
    orders
        .act(&staff, for_tom.id(), OrderAction::Cancel, None)
        .await
        .expect("cancel");
    assert_eq!(counts(&fixture).await, [2, 0, 1]);
}

async fn a_removed_pet_is_never_counted(fixture: Fixture) {
    let rex = created(&fixture, None).await;
    let sold = created(&fixture, Some(PetStatus::Sold)).await;
    created(&fixture, Some(PetStatus::Sold)).await;
    let pets = PetService::new(fixture.repo_arc(), Arc::new(SystemClock));
    pets.remove_pet(rex.id(), None).await.expect("remove");
    pets.remove_pet(sold.id(), None).await.expect("remove");
    assert_eq!(counts(&fixture).await, [0, 0, 1]);
}
