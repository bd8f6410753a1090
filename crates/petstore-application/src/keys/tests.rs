//! The key directory against a mocked registry and clock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{ApiKey, KeyId, KeyName, KeyScope, TokenDigest};

use super::{
    KeyChanges, KeyDirectory, KeyRefusal, LookupError, MockKeyRegistry, Revocation, MISS_TTL,
};
use crate::MockClock;
use crate::RepositoryError;

const START: u64 = 1_800_000_000;

/// A clock the test moves by hand.
fn clock() -> (Arc<MockClock>, Arc<Mutex<SystemTime>>) {
    let now = Arc::new(Mutex::new(UNIX_EPOCH + Duration::from_secs(START)));
    let mut clock = MockClock::new();
    let shared = Arc::clone(&now);
    clock
        .expect_now()
        .returning(move || *shared.lock().expect("clock"));
    (Arc::new(clock), now)
}

fn id(n: u8) -> KeyId {
    KeyId::parse(&format!("{n:032x}")).expect("a key id")
}

/// The digest of the token issued for key `n`.
fn token(n: u8) -> TokenDigest {
    TokenDigest([n; 32])
}

fn key(n: u8, scope: KeyScope) -> ApiKey {
    ApiKey {
        id: id(n),
        name: KeyName::parse(&format!("key {n}")).expect("a name"),
        scope,
        token_digest: Some(token(n)),
        created_at: START as i64,
        expires_at: Some(START as i64 + 3600),
        revoked_at: None,
        last_used_at: None,
    }
}

fn changes(keys: Vec<ApiKey>, revision: i64) -> Result<KeyChanges, RepositoryError> {
    Ok(KeyChanges { keys, revision })
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable("the database is down".into())
}

#[test]
fn known_keys_pass_with_their_scope_and_unknown_ones_are_refused() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .with(eq(0))
        .return_once(|_| changes(vec![key(1, KeyScope::Read), key(2, KeyScope::Write)], 2));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Read)
    );
    assert_eq!(
        directory.check(id(2).as_str(), &token(2)),
        Ok(KeyScope::Write)
    );
    assert_eq!(
        directory.check(id(3).as_str(), &token(3)),
        Err(KeyRefusal::Unknown)
    );
    assert_eq!(
        directory.check("not even an id", &token(1)),
        Err(KeyRefusal::Unknown)
    );
}

#[test]
fn a_refresh_reads_only_changes_and_applies_revocations() {
    let mut registry = MockKeyRegistry::new();
    let mut sequence = mockall::Sequence::new();
    registry
        .expect_changes_since()
        .with(eq(0))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![key(1, KeyScope::Write)], 7));
    let mut revoked = key(1, KeyScope::Write);
    revoked.revoked_at = Some(START as i64 + 1);
    registry
        .expect_changes_since()
        .with(eq(7))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(move |_| changes(vec![revoked], 8));
    registry
        .expect_changes_since()
        .with(eq(8))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![], 8));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Write)
    );

    assert_eq!(directory.refresh().expect("refresh"), 1);
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Err(KeyRefusal::Revoked)
    );
    assert_eq!(directory.refresh().expect("refresh"), 0);
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Err(KeyRefusal::Revoked)
    );
}

#[test]
fn a_key_stops_working_when_it_expires() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    let (clock, now) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");
    *now.lock().unwrap() += Duration::from_secs(3599);
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Read)
    );
    *now.lock().unwrap() += Duration::from_secs(1);
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Err(KeyRefusal::Expired)
    );
}

#[test]
fn an_unreadable_registry_keeps_the_last_known_keys_and_grows_stale() {
    let mut registry = MockKeyRegistry::new();
    let mut sequence = mockall::Sequence::new();
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    registry
        .expect_changes_since()
        .times(2)
        .in_sequence(&mut sequence)
        .returning(|_| Err(unavailable()));
    registry
        .expect_changes_since()
        .with(eq(1))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![], 1));
    let (clock, now) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");
    assert_eq!(directory.stale_for(), Duration::ZERO);

    *now.lock().unwrap() += Duration::from_secs(3);
    assert!(directory.refresh().is_err());
    *now.lock().unwrap() += Duration::from_secs(3);
    assert!(directory.refresh().is_err());
    assert_eq!(directory.stale_for(), Duration::from_secs(6));
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Read)
    );
    assert_eq!(
        directory.check(id(2).as_str(), &token(2)),
        Err(KeyRefusal::Unknown)
    );

    directory.refresh().expect("the registry is back");
    assert_eq!(directory.stale_for(), Duration::ZERO);
}

#[test]
fn uses_are_recorded_at_most_once_a_minute_per_key() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .return_once(|_| changes(vec![key(1, KeyScope::Read), key(2, KeyScope::Read)], 2));
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&recorded);
    registry.expect_record_use().returning(move |uses| {
        sink.lock().unwrap().push(uses.to_vec());
        Ok(())
    });
    let (clock, now) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    assert_eq!(
        directory.record_uses().expect("record"),
        0,
        "nothing used yet"
    );
    for _ in 0..1000 {
        directory.check(id(1).as_str(), &token(1)).expect("usable");
    }
    assert_eq!(directory.record_uses().expect("record"), 1);
    directory.check(id(1).as_str(), &token(1)).expect("usable");
    assert_eq!(directory.record_uses().expect("record"), 0, "same minute");
    *now.lock().unwrap() += Duration::from_secs(60);
    directory.check(id(1).as_str(), &token(1)).expect("usable");
    assert_eq!(directory.record_uses().expect("record"), 1);

    let minute = |offset: i64| ((START as i64 + offset) / 60) * 60;
    assert_eq!(
        *recorded.lock().unwrap(),
        vec![vec![(id(1), minute(0))], vec![(id(1), minute(60))]]
    );
}

#[test]
fn issuing_records_the_key_with_its_expiry_and_makes_it_usable_at_once() {
    let mut registry = MockKeyRegistry::new();
    let mut sequence = mockall::Sequence::new();
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![], 0));
    let expected = ApiKey {
        expires_at: Some(START as i64 + 90 * 86_400),
        scope: KeyScope::Read,
        ..key(5, KeyScope::Read)
    };
    let stored = expected.clone();
    registry
        .expect_insert()
        .withf(move |key| *key == stored)
        .times(1)
        .in_sequence(&mut sequence)
        .returning(|_| Ok(()));
    let inserted = expected.clone();
    registry
        .expect_changes_since()
        .with(eq(0))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(move |_| changes(vec![inserted], 1));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    let key = ApiKey {
        token_digest: Some(token(5)),
        ..directory.draft(
            id(5),
            KeyName::parse("key 5").unwrap(),
            KeyScope::Read,
            Some(Duration::from_secs(90 * 86_400)),
        )
    };
    assert_eq!(key, expected);
    directory.record(&key).expect("record");
    assert_eq!(
        directory.check(id(5).as_str(), &token(5)),
        Ok(KeyScope::Read)
    );
}

#[test]
fn a_bound_key_passes_only_with_its_own_token_and_an_unbound_one_with_any() {
    let unbound = ApiKey {
        token_digest: None,
        ..key(2, KeyScope::Write)
    };
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .return_once(move |_| changes(vec![key(1, KeyScope::Write), unbound], 2));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Write)
    );
    assert_eq!(
        directory.check(id(1).as_str(), &token(7)),
        Err(KeyRefusal::NotIssued),
        "a second token minted with the secret for a recorded id"
    );
    assert!(matches!(
        directory.look_up(id(1).as_str(), &token(7)),
        Err(LookupError::Refused(KeyRefusal::NotIssued))
    ));
    assert_eq!(directory.unbound_usable(), 1);
    for presented in [token(2), token(7)] {
        assert_eq!(
            directory.check(id(2).as_str(), &presented),
            Ok(KeyScope::Write),
            "a key recorded before tokens were bound"
        );
    }
}

#[test]
fn revoking_passes_the_registry_answer_through_and_applies_it_at_once() {
    let mut registry = MockKeyRegistry::new();
    let mut sequence = mockall::Sequence::new();
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![key(1, KeyScope::Write)], 1));
    let mut revoked = key(1, KeyScope::Write);
    revoked.revoked_at = Some(START as i64);
    let answer = revoked.clone();
    registry
        .expect_revoke()
        .with(eq(id(1)), eq(START as i64))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(move |_, _| Ok(Revocation::Revoked(answer)));
    let change = revoked.clone();
    registry
        .expect_changes_since()
        .with(eq(1))
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(move |_| changes(vec![change], 2));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    assert_eq!(
        directory.revoke(&id(1)).expect("revoke"),
        Revocation::Revoked(revoked)
    );
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Err(KeyRefusal::Revoked)
    );
}

#[test]
fn a_key_recorded_since_the_last_refresh_is_found_by_one_lookup_shared_by_every_request() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .with(eq(0))
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    // The read a lookup makes waits until the test lets it answer, so that other requests for
    // the same key arrive while it is in flight.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    registry
        .expect_changes_since()
        .with(eq(1))
        .times(1)
        .returning(move |_| {
            released.lock().expect("channel").recv().expect("released");
            changes(vec![key(2, KeyScope::Write)], 2)
        });
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");
    assert_eq!(
        directory.check(id(2).as_str(), &token(2)),
        Err(KeyRefusal::Unknown)
    );
    assert!(directory.worth_looking_up(id(2).as_str()));

    let lookups: Vec<_> = (0..8)
        .map(|_| {
            let directory = directory.clone();
            std::thread::spawn(move || {
                directory
                    .look_up(id(2).as_str(), &token(2))
                    .map_err(|e| e.to_string())
            })
        })
        .collect();
    release.send(()).expect("release the read");
    for lookup in lookups {
        assert_eq!(lookup.join().expect("thread"), Ok(KeyScope::Write));
    }
    assert_eq!(
        directory.check(id(2).as_str(), &token(2)),
        Ok(KeyScope::Write)
    );
}

#[test]
fn a_key_still_unknown_after_a_lookup_is_refused_without_another_read_for_a_while() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .with(eq(0))
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    registry
        .expect_changes_since()
        .with(eq(1))
        .times(2)
        .returning(|_| changes(vec![], 1));
    let (clock, now) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    let missing = id(9);
    assert!(matches!(
        directory.look_up(missing.as_str(), &token(9)),
        Err(LookupError::Refused(KeyRefusal::Unknown))
    ));
    assert!(!directory.worth_looking_up(missing.as_str()));
    assert!(directory.worth_looking_up(id(8).as_str()), "only that key");
    *now.lock().expect("clock") += MISS_TTL;
    assert!(directory.worth_looking_up(missing.as_str()));
    assert!(matches!(
        directory.look_up(missing.as_str(), &token(9)),
        Err(LookupError::Refused(KeyRefusal::Unknown))
    ));
}

#[test]
fn a_lookup_that_cannot_read_the_registry_says_so_and_is_not_remembered() {
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .with(eq(0))
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    registry
        .expect_changes_since()
        .with(eq(1))
        .return_once(|_| Err(unavailable()));
    let (clock, _) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    assert!(matches!(
        directory.look_up(id(2).as_str(), &token(2)),
        Err(LookupError::Repository(RepositoryError::Unavailable(_)))
    ));
    assert!(directory.worth_looking_up(id(2).as_str()));
}

#[test]
fn a_use_in_the_minute_a_key_was_issued_is_never_recorded_before_its_creation() {
    let mut issued_mid_minute = key(1, KeyScope::Read);
    issued_mid_minute.created_at = START as i64 + 30;
    let mut registry = MockKeyRegistry::new();
    registry
        .expect_changes_since()
        .return_once(move |_| changes(vec![issued_mid_minute], 1));
    registry
        .expect_record_use()
        .withf(|uses| uses == [(id(1), START as i64 + 30)])
        .times(1)
        .returning(|_| Ok(()));
    let (clock, now) = clock();
    *now.lock().unwrap() += Duration::from_secs(40);
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");

    directory.check(id(1).as_str(), &token(1)).expect("usable");
    assert_eq!(directory.record_uses().expect("record"), 1);
}

#[test]
fn catching_up_reads_the_registry_once_for_callers_that_come_together() {
    let mut registry = MockKeyRegistry::new();
    let mut sequence = mockall::Sequence::new();
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![], 0));
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| Err(unavailable()));
    registry
        .expect_changes_since()
        .times(1)
        .in_sequence(&mut sequence)
        .return_once(|_| changes(vec![key(1, KeyScope::Read)], 1));
    let (clock, now) = clock();
    let directory = KeyDirectory::load(Arc::new(registry), clock).expect("load");
    *now.lock().unwrap() += Duration::from_secs(10);
    assert!(directory.refresh().is_err(), "the registry is down");
    assert_eq!(directory.stale_for(), Duration::from_secs(10));

    directory.catch_up().expect("read again");
    assert_eq!(directory.stale_for(), Duration::ZERO);
    assert_eq!(
        directory.check(id(1).as_str(), &token(1)),
        Ok(KeyScope::Read)
    );
}
