//! The idempotency contract of every adapter (memory, a SQLite file, PostgreSQL): a recorded
//! write stores its record in the same transaction, a key recorded once is never written again,
//! two creates with one key in one group store one pet, and records expire and are purged.

mod common;

use petstore_domain::PetSearch;
use std::sync::Arc;

use common::{done, new_pet, Fixture};
use futures_util::future::join_all;
use petstore_application::{
    Fingerprint, IdempotencyRecord, OrderService, RecordPlan, StoredResponse, SystemClock, Written,
};
use petstore_domain::{
    Caller, IdempotencyKey, KeyId, KeyScope, NewOrder, OrderFilter, OrderListQuery, OrderQuantity,
    PageLimit, Pet, PetStatus,
};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    a_recorded_create_stores_its_record_and_a_second_one_stores_nothing,
    creates_with_one_key_at_once_store_one_pet,
    a_recorded_order_is_placed_once,
    refusals_are_stored_once_and_records_expire,
    an_expired_record_is_replaced_by_the_next_create,
    a_retry_among_new_keys_is_answered_and_the_new_ones_stored,
    every_accepted_key_reads_back_as_itself,
);

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::parse(text).expect("a valid key")
}

/// The key id of the owner named `name`: its bytes in hex, padded with zeros.
fn owner_id(name: &str) -> KeyId {
    let hex: String = name.bytes().map(|byte| format!("{byte:02x}")).collect();
    KeyId::parse(&format!("{hex:0<32}")).expect("a valid key id")
}

fn plan<T: 'static>(owner: &str, key_text: &str, stored_at: i64) -> RecordPlan<T> {
    RecordPlan {
        owner: owner_id(owner),
        key: key(key_text),
        fingerprint: Fingerprint([7; 32]),
        stored_at,
        expired_before: stored_at - 86_400,
        render: |_| StoredResponse {
            status: 201,
            headers: vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("location".to_owned(), "/v1/somewhere".to_owned()),
            ],
            body: b"{\"the\":\"body\"}".to_vec(),
        },
    }
}

fn pet_plan(owner: &str, key_text: &str) -> RecordPlan<Pet> {
    let mut plan = plan::<Pet>(owner, key_text, 1_900_000_000);
    plan.render = |pet: &Pet| StoredResponse {
        status: 201,
        headers: vec![(
            "location".to_owned(),
            format!("/v1/pets/{}", pet.id().get()),
        )],
        body: format!("{{\"id\":{}}}", pet.id().get()).into_bytes(),
    };
    plan
}

async fn a_recorded_create_stores_its_record_and_a_second_one_stores_nothing(fixture: Fixture) {
    let first = fixture
        .repo()
        .create(new_pet("Rex", 1, None), Some(pet_plan("k1", "retry-1")))
        .await
        .expect("create");
    let Written::Done(pet, sent) = first else {
        panic!("{first:?}")
    };
    let stored = fixture
        .idempotency()
        .find(&owner_id("k1"), &key("retry-1"))
        .await
        .expect("find")
        .expect("the record was stored with the pet");
    assert_eq!(
        sent,
        Some(stored.response.clone()),
        "the response to send is the one stored"
    );
    assert_eq!(
        stored.response.body,
        format!("{{\"id\":{}}}", pet.id().get()).into_bytes()
    );
    assert_eq!(
        stored.response.headers,
        [(
            "location".to_owned(),
            format!("/v1/pets/{}", pet.id().get())
        )]
    );
    assert_eq!(stored.fingerprint, Fingerprint([7; 32]));

    let again = fixture
        .repo()
        .create(new_pet("Rex", 1, None), Some(pet_plan("k1", "retry-1")))
        .await
        .expect("create");
    match again {
        Written::Earlier(record) => assert_eq!(record, stored),
        other => panic!("{other:?}"),
    }
    // Another owner's key of the same value is another key.
    let other_owner = fixture
        .repo()
        .create(new_pet("Rex", 1, None), Some(pet_plan("k2", "retry-1")))
        .await
        .expect("create");
    assert!(matches!(other_owner, Written::Done(..)), "{other_owner:?}");
    let pets = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 100)
        .await
        .expect("list");
    assert_eq!(pets.len(), 2, "{pets:?}");
}

async fn creates_with_one_key_at_once_store_one_pet(fixture: Fixture) {
    let repo = fixture.repo_arc();
    let outcomes = join_all((0..16).map(|n| {
        let repo = Arc::clone(&repo);
        async move {
            // Unkeyed creates in the same groups, stored as usual.
            let plain = repo.create(new_pet(&format!("plain {n}"), 1, None), None);
            let keyed = repo.create(new_pet("Once", 1, None), Some(pet_plan("k1", "same")));
            let (plain, keyed) = tokio::join!(plain, keyed);
            plain.expect("plain create");
            keyed.expect("keyed create")
        }
    }))
    .await;
    let done: Vec<&Pet> = outcomes
        .iter()
        .filter_map(|outcome| match outcome {
            Written::Done(pet, _) => Some(pet),
            Written::Earlier(_) => None,
        })
        .collect();
    assert_eq!(done.len(), 1, "{outcomes:?}");
    let expected = format!("{{\"id\":{}}}", done[0].id().get()).into_bytes();
    for outcome in &outcomes {
        if let Written::Earlier(record) = outcome {
            assert_eq!(record.response.body, expected);
        }
    }
    let pets = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 100)
        .await
        .expect("list");
    assert_eq!(
        pets.iter()
            .filter(|pet| pet.name().as_str() == "Once")
            .count(),
        1
    );
    assert_eq!(pets.len(), 17);
}

async fn a_recorded_order_is_placed_once(fixture: Fixture) {
    let pet = fixture
        .repo()
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let orders = OrderService::new(fixture.orders_arc(), Arc::new(SystemClock));
    let order = || NewOrder::new(pet.id(), OrderQuantity::ONE);
    let caller = Caller::new(
        KeyId::parse(&"1".repeat(32)).expect("a key id"),
        KeyScope::Write,
    );
    let first = orders
        .place(&caller, order(), Some(plan("k1", "order-1", 1_900_000_000)))
        .await
        .expect("place");
    assert!(matches!(first, Written::Done(..)), "{first:?}");
    let retry = orders
        .place(&caller, order(), Some(plan("k1", "order-1", 1_900_000_000)))
        .await
        .expect("replayed, not refused as the pet is no longer available");
    assert!(matches!(retry, Written::Earlier(_)), "{retry:?}");
    let listed = orders
        .list(
            &caller,
            OrderListQuery {
                filter: OrderFilter::default(),
                after: None,
                limit: PageLimit::DEFAULT,
            },
        )
        .await
        .expect("list");
    assert_eq!(listed.orders.len(), 1);
    let pet = fixture
        .repo()
        .find(pet.id())
        .await
        .expect("find")
        .expect("pet");
    assert_eq!(pet.status(), PetStatus::Pending);
}

async fn refusals_are_stored_once_and_records_expire(fixture: Fixture) {
    let store = fixture.idempotency();
    let record = |stored_at: i64, status: u16| IdempotencyRecord {
        owner: owner_id("k1"),
        key: key("refused"),
        fingerprint: Fingerprint([1; 32]),
        response: StoredResponse {
            status,
            headers: Vec::new(),
            body: b"{}".to_vec(),
        },
        stored_at,
    };
    let (owner, refused) = (owner_id("k1"), key("refused"));
    let find = || store.find(&owner, &refused);
    assert_eq!(
        store.insert(record(1_000, 400), 0).await.expect("insert"),
        None
    );
    assert_eq!(
        store
            .insert(record(1_001, 400), 1_000)
            .await
            .expect("insert"),
        Some(record(1_000, 400)),
        "the first record stays while it is live"
    );
    // Past its retention, a record is replaced by the next one for its key.
    assert_eq!(
        store
            .insert(record(2_000, 400), 1_001)
            .await
            .expect("insert"),
        None
    );
    assert_eq!(find().await.expect("find"), Some(record(2_000, 400)));

    for n in 0..5 {
        let mut other = record(500 + n, 400);
        other.key = key(&format!("old-{n}"));
        store.insert(other, 0).await.expect("insert");
    }
    assert_eq!(store.purge(1_000, 3).await.expect("purge"), 3);
    assert_eq!(store.purge(1_000, 3).await.expect("purge"), 2);
    assert_eq!(store.purge(1_000, 3).await.expect("purge"), 0);
    assert!(
        find().await.expect("find").is_some(),
        "a live record is not purged"
    );
}

/// A create whose key has an expired record stores its pet and replaces the record.
async fn an_expired_record_is_replaced_by_the_next_create(fixture: Fixture) {
    let mut old = pet_plan("k1", "reused-later");
    old.stored_at = 1_000;
    let first = fixture
        .repo()
        .create(new_pet("Old", 1, None), Some(old))
        .await
        .expect("create");
    assert!(matches!(first, Written::Done(..)), "{first:?}");
    let later = pet_plan("k1", "reused-later");
    let second = fixture
        .repo()
        .create(new_pet("New", 1, None), Some(later))
        .await
        .expect("create");
    let Written::Done(pet, _) = second else {
        panic!("answered from an expired record: {second:?}")
    };
    let stored = fixture
        .idempotency()
        .find(&owner_id("k1"), &key("reused-later"))
        .await
        .expect("find")
        .expect("a record");
    assert_eq!(stored.stored_at, 1_900_000_000);
    assert_eq!(
        stored.response.body,
        format!("{{\"id\":{}}}", pet.id().get()).into_bytes()
    );
}

/// A retry in a group of first requests: the retry is answered from its record and stores no
/// pet; each first request stores its pet with its own record, whichever group it lands in.
async fn a_retry_among_new_keys_is_answered_and_the_new_ones_stored(fixture: Fixture) {
    let repo = fixture.repo_arc();
    let first = repo
        .create(new_pet("First", 1, None), Some(pet_plan("k1", "retried")))
        .await
        .expect("create");
    let Written::Done(first_pet, _) = first else {
        panic!("a first request answered from a record: {first:?}")
    };
    let keys = ["new-1", "retried", "new-2", "new-3", "retried", "new-4"];
    let outcomes = join_all(keys.map(|key_text| {
        let repo = Arc::clone(&repo);
        async move {
            let outcome = repo
                .create(new_pet(key_text, 1, None), Some(pet_plan("k1", key_text)))
                .await
                .expect("create");
            (key_text, outcome)
        }
    }))
    .await;
    for (key_text, outcome) in outcomes {
        let stored = fixture
            .idempotency()
            .find(&owner_id("k1"), &key(key_text))
            .await
            .expect("find")
            .expect("a record for every key");
        match outcome {
            Written::Done(pet, _) => {
                assert_ne!(key_text, "retried", "a retry stored another pet");
                assert_eq!(
                    stored.response.body,
                    format!("{{\"id\":{}}}", pet.id().get()).into_bytes(),
                    "{key_text}: the stored record is not this create's"
                );
            }
            Written::Earlier(record) => {
                assert_eq!(
                    key_text, "retried",
                    "a first request was answered: {record:?}"
                );
                assert_eq!(record, stored);
                assert_eq!(
                    record.response.body,
                    format!("{{\"id\":{}}}", first_pet.id().get()).into_bytes()
                );
            }
        }
    }
    let mut names: Vec<String> = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 100)
        .await
        .expect("list")
        .iter()
        .map(|pet| pet.name().as_str().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["First", "new-1", "new-2", "new-3", "new-4"]);
}

/// Every key a header can carry, stored with a write and read back, is the key it was: a retry
/// with it is answered from its record. Keys drawn from every visible ASCII character (a fixed
/// seed, so a failure is reproducible), and the forms that once broke.
async fn every_accepted_key_reads_back_as_itself(fixture: Fixture) {
    use proptest::strategy::{Strategy, ValueTree};

    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let drawn = proptest::string::string_regex("[!-~]{1,255}").expect("a key pattern");
    let mut headers: Vec<String> = [r#""\"q1""#, r#""\\""#, r#""a,b""#, r#""\"""#, "~"]
        .map(str::to_owned)
        .to_vec();
    for _ in 0..48 {
        let contents = drawn.new_tree(&mut runner).expect("a key").current();
        let quoted = contents.replace('\\', "\\\\").replace('"', "\\\"");
        headers.push(format!("\"{quoted}\""));
    }
    for header in headers {
        let key =
            IdempotencyKey::parse(&header).unwrap_or_else(|error| panic!("{header}: {error}"));
        let mut plan = pet_plan("k1", "placeholder");
        plan.key = key.clone();
        let first = fixture
            .repo()
            .create(new_pet("Keyed", 1, None), Some(plan.clone()))
            .await
            .expect("create");
        assert!(matches!(first, Written::Done(..)), "{header}: {first:?}");
        let retry = fixture
            .repo()
            .create(new_pet("Keyed", 1, None), Some(plan))
            .await
            .unwrap_or_else(|error| panic!("{header}: {error}"));
        match retry {
            Written::Earlier(record) => assert_eq!(record.key, key, "{header}"),
            other => panic!("{header}: {other:?}"),
        }
    }
}
