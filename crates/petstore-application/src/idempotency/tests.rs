//! The retry rules with a mocked store: what a client retrying with a key would notice.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{IdempotencyKey, IdempotencyRetention};

use super::*;
use crate::storage::RepositoryError;
use crate::MockClock;

const NOW: i64 = 1_900_000_000;

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::parse(text).unwrap()
}

fn owner(id: &str) -> KeyOwner {
    KeyOwner(id.to_owned())
}

fn response(status: u16) -> StoredResponse {
    StoredResponse {
        status,
        headers: vec![("location".to_owned(), "/v1/pets/7".to_owned())],
        body: br#"{"id":7}"#.to_vec(),
    }
}

fn record(stored_at: i64, fingerprint: Fingerprint) -> IdempotencyRecord {
    IdempotencyRecord {
        owner: owner("k1"),
        key: key("retry-1"),
        fingerprint,
        response: response(201),
        stored_at,
    }
}

fn service(store: MockIdempotencyStore) -> Idempotency {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(UNIX_EPOCH + Duration::from_secs(NOW as u64));
    Idempotency::new(
        Arc::new(store),
        Arc::new(clock),
        IdempotencyRetention::DEFAULT,
    )
}

const SAME: Fingerprint = Fingerprint([1; 32]);
const OTHER: Fingerprint = Fingerprint([2; 32]);

#[tokio::test]
async fn a_new_key_is_carried_out_and_a_second_request_meanwhile_is_in_flight() {
    let mut store = MockIdempotencyStore::new();
    store.expect_find().returning(|_, _| Ok(None));
    let idempotency = service(store);
    let first = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    let Admission::Proceed(claim) = first else {
        panic!("{first:?}")
    };
    let meanwhile = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    assert!(matches!(meanwhile, Admission::InFlight), "{meanwhile:?}");
    // Another API key's request with the same value is another request.
    let other_owner = idempotency
        .admit(owner("k2"), key("retry-1"), SAME)
        .await
        .unwrap();
    assert!(
        matches!(other_owner, Admission::Proceed(_)),
        "{other_owner:?}"
    );

    drop(claim);
    let after = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    assert!(matches!(after, Admission::Proceed(_)), "{after:?}");
}

#[tokio::test]
async fn a_stored_response_is_replayed_for_the_same_request_and_refused_for_another() {
    let mut store = MockIdempotencyStore::new();
    store
        .expect_find()
        .with(eq(owner("k1")), eq(key("retry-1")))
        .returning(|_, _| Ok(Some(record(NOW - 60, SAME))));
    let idempotency = service(store);
    let same = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    match same {
        Admission::Replay(replayed) => assert_eq!(replayed, response(201)),
        other => panic!("{other:?}"),
    }
    let other = idempotency
        .admit(owner("k1"), key("retry-1"), OTHER)
        .await
        .unwrap();
    assert!(matches!(other, Admission::Reused), "{other:?}");
    // Neither left the key claimed.
    let again = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    assert!(matches!(again, Admission::Replay(_)), "{again:?}");
}

#[tokio::test]
async fn an_expired_record_is_removed_and_the_key_used_again() {
    // Stored exactly a retention ago: expired, and removed by the same cutoff.
    let day = 86_400;
    let mut store = MockIdempotencyStore::new();
    store
        .expect_find()
        .returning(move |_, _| Ok(Some(record(NOW - day, SAME))));
    store
        .expect_remove_expired()
        .with(eq(owner("k1")), eq(key("retry-1")), eq(NOW - day + 1))
        .times(1)
        .returning(|_, _, _| Ok(()));
    let admission = service(store)
        .admit(owner("k1"), key("retry-1"), OTHER)
        .await
        .unwrap();
    assert!(matches!(admission, Admission::Proceed(_)), "{admission:?}");
}

#[tokio::test]
async fn a_refusal_is_stored_and_a_record_stored_first_answers_instead() {
    let mut store = MockIdempotencyStore::new();
    store.expect_find().returning(|_, _| Ok(None));
    store
        .expect_insert()
        .withf(|record| record.response.status == 404 && record.stored_at == NOW)
        .times(1)
        .returning(|_| Ok(None));
    let idempotency = service(store);
    let Admission::Proceed(claim) = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap()
    else {
        panic!("not admitted")
    };
    assert!(idempotency
        .record(claim, response(404))
        .await
        .unwrap()
        .is_none());

    let mut store = MockIdempotencyStore::new();
    store.expect_find().returning(|_, _| Ok(None));
    store
        .expect_insert()
        .returning(|_| Ok(Some(record(NOW - 1, OTHER))));
    let idempotency = service(store);
    let Admission::Proceed(claim) = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap()
    else {
        panic!("not admitted")
    };
    let answer = idempotency.record(claim, response(404)).await.unwrap();
    assert!(matches!(answer, Some(Admission::Reused)), "{answer:?}");
}

#[tokio::test]
async fn storage_failing_leaves_the_key_free_for_the_retry() {
    let mut store = MockIdempotencyStore::new();
    store
        .expect_find()
        .times(1)
        .returning(|_, _| Err(RepositoryError::Unavailable("down".into())));
    store.expect_find().returning(|_, _| Ok(None));
    let idempotency = service(store);
    assert!(idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .is_err());
    let retry = idempotency
        .admit(owner("k1"), key("retry-1"), SAME)
        .await
        .unwrap();
    assert!(matches!(retry, Admission::Proceed(_)), "{retry:?}");
}

#[tokio::test]
async fn the_purge_removes_batches_until_one_comes_back_short() {
    let mut store = MockIdempotencyStore::new();
    let mut left = 2_500_usize;
    store
        .expect_purge()
        .with(eq(NOW - 86_400 + 1), eq(1_000))
        .times(3)
        .returning(move |_, max| {
            let removed = left.min(max);
            left -= removed;
            Ok(removed)
        });
    assert_eq!(service(store).purge_expired(1_000).await.unwrap(), 2_500);
}
