//! The retry rules with a mocked store: what a client retrying with a key would notice.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{IdempotencyKey, IdempotencyRetention, KeyId};

use super::*;
use crate::MockClock;

const NOW: i64 = 1_900_000_000;
const DAY: i64 = 86_400;

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::parse(text).unwrap()
}

/// The key id of the owner named `name`: its bytes in hex, padded with zeros.
fn owner(name: &str) -> KeyId {
    let hex: String = name.bytes().map(|byte| format!("{byte:02x}")).collect();
    KeyId::parse(&format!("{hex:0<32}")).unwrap()
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

fn claimed(idempotency: &Idempotency, owner_id: &str) -> Claim {
    match idempotency.admit(owner(owner_id), key("retry-1"), SAME) {
        Admission::Proceed(claim) => claim,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_key_is_claimed_once_at_a_time_per_api_key() {
    let idempotency = service(MockIdempotencyStore::new());
    let claim = claimed(&idempotency, "k1");
    let meanwhile = idempotency.admit(owner("k1"), key("retry-1"), SAME);
    assert!(matches!(meanwhile, Admission::InFlight), "{meanwhile:?}");
    // Another API key's request with the same value is another request.
    drop(claimed(&idempotency, "k2"));
    drop(claim);
    drop(claimed(&idempotency, "k1"));
}

#[test]
fn a_claim_plans_a_record_stored_now_that_replaces_only_expired_ones() {
    let idempotency = service(MockIdempotencyStore::new());
    let plan = claimed(&idempotency, "k1").plan::<u32>(|_| response(201));
    assert_eq!(plan.stored_at, NOW);
    // Stored exactly a retention ago: still kept; a second more: expired.
    assert_eq!(plan.expired_before, NOW - DAY);
    assert!(plan.is_answered_by(&record(NOW - DAY, SAME)));
    assert!(!plan.is_answered_by(&record(NOW - DAY - 1, SAME)));
    let made = plan.record_for(&7);
    assert_eq!((made.stored_at, made.fingerprint), (NOW, SAME));
}

#[test]
fn a_stored_response_is_replayed_for_the_same_request_and_refused_for_another() {
    let stored = record(NOW - 60, SAME);
    assert_eq!(
        Idempotency::answer(&stored, SAME),
        Answer::Replay(response(201))
    );
    assert_eq!(Idempotency::answer(&stored, OTHER), Answer::Reused);
}

#[tokio::test]
async fn a_request_refusal_is_stored_and_a_record_stored_first_answers_instead() {
    let mut store = MockIdempotencyStore::new();
    store
        .expect_insert()
        .withf(|record, expired_before| {
            record.response.status == 400 && record.stored_at == NOW && *expired_before == NOW - DAY
        })
        .times(1)
        .returning(|_, _| Ok(None));
    let idempotency = service(store);
    let claim = claimed(&idempotency, "k1");
    assert_eq!(
        idempotency
            .record_refusal(claim, response(400))
            .await
            .unwrap(),
        None
    );

    let mut store = MockIdempotencyStore::new();
    store
        .expect_insert()
        .returning(|_, _| Ok(Some(record(NOW - 1, OTHER))));
    let idempotency = service(store);
    let claim = claimed(&idempotency, "k1");
    let answer = idempotency
        .record_refusal(claim, response(400))
        .await
        .unwrap();
    assert_eq!(answer, Some(Answer::Reused));
    // The claim is given back either way.
    drop(claimed(&idempotency, "k1"));
}

#[tokio::test]
async fn the_purge_removes_batches_until_one_comes_back_short() {
    let mut store = MockIdempotencyStore::new();
    let mut left = 2_500_usize;
    store
        .expect_purge()
        .with(eq(NOW - DAY), eq(1_000))
        .times(3)
        .returning(move |_, max| {
            let removed = left.min(max);
            left -= removed;
            Ok(removed)
        });
    assert_eq!(service(store).purge_expired(1_000).await.unwrap(), 2_500);
}
