//! Pets that change and go, as every adapter must keep them (memory, a SQLite file, PostgreSQL):
//! a change read back at its next version, a change that changes nothing writing nothing, a
//! removed pet gone from every read while its orders stay, the rules checked under the pet's
//! lock (an order holding the pet, the client's version), and changes racing each other or an
//! order: exactly one wins.

mod common;

use petstore_domain::PetSearch;
use std::sync::Arc;

use common::{done, new_pet, Fixture};
use futures_util::future::join_all;
use petstore_application::{
    Fingerprint, OrderError, OrderService, PetService, PetWriteError, RecordPlan, StoredResponse,
    SystemClock, VersionCondition, Written,
};
use petstore_domain::{
    Caller, IdempotencyKey, KeyId, KeyScope, NewOrder, OrderAction, OrderQuantity, Patch, Pet,
    PetChange, PetChangeFields, PetId, PetName, PetStatus, PetVersion,
};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    a_change_is_read_back_at_the_next_version,
    a_change_that_changes_nothing_keeps_the_version,
    a_removed_pet_is_gone_from_every_read_and_its_orders_stay,
    an_order_holding_the_pet_refuses_its_status_and_its_removal,
    orders_move_the_version_of_their_pet,
    of_twenty_changes_from_one_version_exactly_one_is_written,
    an_order_racing_a_removal_never_leaves_an_order_for_a_removed_pet,
    a_keyed_change_retried_after_it_was_written_is_answered_from_its_record,
);

fn pets(fixture: &Fixture) -> PetService {
    PetService::new(fixture.repo_arc(), Arc::new(SystemClock))
}

fn orders(fixture: &Fixture) -> OrderService {
    OrderService::new(fixture.orders_arc(), Arc::new(SystemClock))
}

fn staff() -> Caller {
    Caller::new(
        KeyId::parse(&"5".repeat(32)).expect("a key id"),
        KeyScope::Store,
    )
}

fn change(fields: PetChangeFields) -> PetChange {
    PetChange::new(fields).expect("a valid change")
}

fn rename(name: &str) -> PetChange {
    change(PetChangeFields {
        name: Patch::Set(PetName::parse(name).expect("a name")),
        ..Default::default()
    })
}

fn set_status(status: PetStatus) -> PetChange {
    change(PetChangeFields {
        status: Patch::Set(status),
        ..Default::default()
    })
}

async fn created(fixture: &Fixture, name: &str) -> Pet {
    fixture
        .repo()
        .create(new_pet(name, 1, None), None)
        .await
        .map(done)
        .expect("create")
}

async fn stored(fixture: &Fixture, id: PetId) -> Option<Pet> {
    fixture.repo().find(id).await.expect("find")
}

async fn a_change_is_read_back_at_the_next_version(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    assert_eq!(pet.version(), PetVersion::first());
    let both = change(PetChangeFields {
        name: Patch::Set(PetName::parse("Max").expect("a name")),
        status: Patch::Set(PetStatus::Pending),
        ..Default::default()
    });
    let changed = pets(&fixture)
        .update_pet(
            pet.id(),
            both,
            Some(VersionCondition::OneOf(vec![pet.version()])),
            None,
        )
        .await
        .map(done)
        .expect("change");
    assert_eq!(changed.name().as_str(), "Max");
    assert_eq!(changed.status(), PetStatus::Pending);
    assert_eq!(changed.version(), PetVersion::first().next());
    assert_eq!(stored(&fixture, pet.id()).await, Some(changed.clone()));
    let listed = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 10)
        .await
        .expect("list");
    assert_eq!(listed, [changed]);
}

async fn a_change_that_changes_nothing_keeps_the_version(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let same = pets(&fixture)
        .update_pet(pet.id(), rename("Rex"), None, None)
        .await
        .map(done)
        .expect("change");
    assert_eq!(same, pet);
    assert_eq!(stored(&fixture, pet.id()).await, Some(pet));
}

async fn a_removed_pet_is_gone_from_every_read_and_its_orders_stay(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let other = created(&fixture, "Tom").await;
    let orders = orders(&fixture);
    let order = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    orders
        .act(&staff(), order.id(), OrderAction::Cancel, None)
        .await
        .map(done)
        .expect("cancel");

    let removed = pets(&fixture)
        .remove_pet(pet.id(), None)
        .await
        .expect("remove");
    assert_eq!(removed.id(), pet.id());
    assert_eq!(stored(&fixture, pet.id()).await, None);
    let listed = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 10)
        .await
        .expect("list");
    assert_eq!(listed.iter().map(Pet::id).collect::<Vec<_>>(), [other.id()]);
    let by_id = fixture
        .repo()
        .find_many(&[pet.id(), other.id()])
        .await
        .expect("find many");
    assert_eq!(by_id.iter().map(Pet::id).collect::<Vec<_>>(), [other.id()]);
    // Its order is still there to read.
    let kept = orders.get(&staff(), order.id()).await.expect("the order");
    assert_eq!(kept.pet_id(), pet.id());

    // Gone for every write too: a second removal, a change, an order.
    let again = pets(&fixture).remove_pet(pet.id(), None).await;
    assert!(
        matches!(again, Err(PetWriteError::NotFound(id)) if id == pet.id()),
        "{again:?}"
    );
    let changed = pets(&fixture)
        .update_pet(pet.id(), rename("Max"), None, None)
        .await;
    assert!(
        matches!(changed, Err(PetWriteError::NotFound(_))),
        "{changed:?}"
    );
    let ordered = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await;
    assert!(
        matches!(ordered, Err(OrderError::PetNotFound(_))),
        "{ordered:?}"
    );
}

async fn an_order_holding_the_pet_refuses_its_status_and_its_removal(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let orders = orders(&fixture);
    let order = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    for holding in [None, Some(OrderAction::Approve)] {
        if let Some(action) = holding {
            orders
                .act(&staff(), order.id(), action, None)
                .await
                .map(done)
                .expect("approve");
        }
        let status = pets(&fixture)
            .update_pet(pet.id(), set_status(PetStatus::Available), None, None)
            .await;
        assert!(
            matches!(&status, Err(PetWriteError::Change(refusal)) if refusal.to_string().contains(&order.id().to_string())),
            "{status:?}"
        );
        let removal = pets(&fixture).remove_pet(pet.id(), None).await;
        assert!(
            matches!(removal, Err(PetWriteError::Removal(_))),
            "{removal:?}"
        );
    }
    // The name is the pet's own: it may change while an order holds it.
    let renamed = pets(&fixture)
        .update_pet(pet.id(), rename("Max"), None, None)
        .await
        .map(done)
        .expect("rename");
    assert_eq!(renamed.status(), PetStatus::Pending);
    orders
        .act(&staff(), order.id(), OrderAction::Deliver, None)
        .await
        .map(done)
        .expect("deliver");
    pets(&fixture)
        .remove_pet(pet.id(), None)
        .await
        .expect("a pet no order holds goes");
}

async fn orders_move_the_version_of_their_pet(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let orders = orders(&fixture);
    let order = orders
        .place(&staff(), NewOrder::new(pet.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    let placed = stored(&fixture, pet.id()).await.expect("the pet");
    assert_eq!(placed.version(), pet.version().next());
    // A client holding the old version may no longer change it.
    let stale = pets(&fixture)
        .update_pet(
            pet.id(),
            rename("Max"),
            Some(VersionCondition::OneOf(vec![pet.version()])),
            None,
        )
        .await;
    assert!(
        matches!(stale, Err(PetWriteError::Stale { current }) if current == placed.version()),
        "{stale:?}"
    );
    orders
        .act(&staff(), order.id(), OrderAction::Cancel, None)
        .await
        .map(done)
        .expect("cancel");
    let back = stored(&fixture, pet.id()).await.expect("the pet");
    assert_eq!(back.version(), placed.version().next());
    assert_eq!(back.status(), PetStatus::Available);
}

async fn of_twenty_changes_from_one_version_exactly_one_is_written(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let (id, version) = (pet.id(), pet.version());
    let outcomes = join_all((0..20).map(|n| {
        let service = pets(&fixture);
        let condition = VersionCondition::OneOf(vec![version]);
        async move {
            service
                .update_pet(id, rename(&format!("Rex {n}")), Some(condition), None)
                .await
        }
    }))
    .await;
    let written: Vec<&Pet> = outcomes
        .iter()
        .filter_map(|outcome| match outcome {
            Ok(Written::Done(pet, _)) => Some(pet),
            _ => None,
        })
        .collect();
    assert_eq!(written.len(), 1, "{outcomes:?}");
    let stale = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(PetWriteError::Stale { .. })))
        .count();
    assert_eq!(stale, 19, "{outcomes:?}");
    assert_eq!(stored(&fixture, pet.id()).await.as_ref(), Some(written[0]));
}

async fn an_order_racing_a_removal_never_leaves_an_order_for_a_removed_pet(fixture: Fixture) {
    for round in 0..10 {
        let pet = created(&fixture, &format!("Pet {round}")).await;
        let orders = orders(&fixture);
        let pets = pets(&fixture);
        let staff = staff();
        let (placed, removed) = tokio::join!(
            orders.place(&staff, NewOrder::new(pet.id(), OrderQuantity::ONE), None),
            pets.remove_pet(pet.id(), None),
        );
        match (placed, removed) {
            (Ok(_), Err(PetWriteError::Removal(_))) => {
                assert!(stored(&fixture, pet.id()).await.is_some());
            }
            (Err(OrderError::PetNotFound(_)), Ok(_)) => {
                assert!(stored(&fixture, pet.id()).await.is_none());
            }
            other => panic!("round {round}: both or neither won: {other:?}"),
        }
    }
}

async fn a_keyed_change_retried_after_it_was_written_is_answered_from_its_record(fixture: Fixture) {
    let pet = created(&fixture, "Rex").await;
    let plan = RecordPlan {
        owner: KeyId::parse(&"6".repeat(32)).expect("a key id"),
        key: IdempotencyKey::parse("patch-1").expect("a key"),
        fingerprint: Fingerprint([3; 32]),
        stored_at: 1_900_000_000,
        expired_before: 1_900_000_000 - 86_400,
        render: |pet: &Pet| StoredResponse {
            status: 200,
            headers: Vec::new(),
            body: format!("{{\"version\":{}}}", pet.version().get()).into_bytes(),
        },
    };
    let condition = || Some(VersionCondition::OneOf(vec![pet.version()]));
    let first = pets(&fixture)
        .update_pet(pet.id(), rename("Max"), condition(), Some(plan.clone()))
        .await
        .expect("change");
    let Written::Done(changed, Some(response)) = first else {
        panic!("{first:?}")
    };
    // The retry's version is stale now, by its own first attempt: it is answered from the
    // record, not refused.
    let retry = pets(&fixture)
        .update_pet(pet.id(), rename("Max"), condition(), Some(plan))
        .await
        .expect("retry");
    match retry {
        Written::Earlier(record) => assert_eq!(record.response, response),
        other => panic!("{other:?}"),
    }
    assert_eq!(stored(&fixture, pet.id()).await, Some(changed));
}
