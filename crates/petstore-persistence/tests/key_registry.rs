//! The key registry contract, written once and run against every adapter (memory, a SQLite
//! file, a PostgreSQL database of its own per test).

mod common;

use std::sync::Arc;

use common::{open_storage, Fixture};
use petstore_application::{KeyRegistry, Revocation};
use petstore_domain::{ApiKey, KeyId, KeyName, KeyScope, TokenDigest};
use petstore_test_database::eventually_blocking;

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] crate::common::fixture,
    [memory, sqlite, postgres]
    an_inserted_key_is_listed_as_it_was_given,
    changes_since_returns_inserts_and_revocations_once_each_in_order,
    revoking_is_idempotent_and_says_what_it_did,
    last_use_only_moves_forward,
    concurrent_writers_never_let_a_reader_miss_a_change,
);

/// What needs a second instance on the same store (which `memory:` cannot have).
mod two_instances {
    use super::two_instances_recording_the_same_keys_at_once_never_fail;

    petstore_test_database::on_backends!(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)] crate::common::fixture,
        [sqlite, postgres]
        two_instances_recording_the_same_keys_at_once_never_fail,
    );
}

fn id(n: u32) -> KeyId {
    KeyId::parse(&format!("{n:032x}")).expect("a key id")
}

fn key(n: u32, scope: KeyScope) -> ApiKey {
    ApiKey {
        id: id(n),
        name: KeyName::parse(&format!("partner {n} — ünïcode")).expect("a name"),
        scope,
        // Odd keys are bound to a token; even ones were recorded before tokens were bound.
        token_digest: (n % 2 == 1).then(|| TokenDigest([n.to_le_bytes()[0]; 32])),
        created_at: 1_800_000_000 + i64::from(n),
        expires_at: (n % 2 == 0).then_some(1_900_000_000),
        revoked_at: None,
        last_used_at: None,
    }
}

async fn an_inserted_key_is_listed_as_it_was_given(fixture: Fixture) {
    let keys = fixture.keys();
    assert_eq!(keys.list().expect("list"), vec![]);
    keys.insert(&key(1, KeyScope::Read)).expect("insert");
    keys.insert(&key(2, KeyScope::Write)).expect("insert");
    assert_eq!(
        keys.list().expect("list"),
        vec![key(1, KeyScope::Read), key(2, KeyScope::Write)]
    );
    assert!(
        keys.insert(&key(1, KeyScope::Write)).is_err(),
        "an id is recorded once"
    );
}

async fn changes_since_returns_inserts_and_revocations_once_each_in_order(fixture: Fixture) {
    let keys = fixture.keys();
    let start = keys.changes_since(0).expect("changes");
    assert_eq!(start.keys, vec![]);

    keys.insert(&key(1, KeyScope::Read)).expect("insert");
    keys.insert(&key(2, KeyScope::Write)).expect("insert");
    let first = keys.changes_since(start.revision).expect("changes");
    assert_eq!(
        first.keys,
        vec![key(1, KeyScope::Read), key(2, KeyScope::Write)]
    );
    assert!(first.revision > start.revision);
    assert_eq!(
        keys.changes_since(first.revision).expect("changes").keys,
        vec![]
    );

    keys.revoke(&id(1), 1_800_000_100).expect("revoke");
    let second = keys.changes_since(first.revision).expect("changes");
    let mut revoked = key(1, KeyScope::Read);
    revoked.revoked_at = Some(1_800_000_100);
    assert_eq!(second.keys, vec![revoked]);
    assert!(second.revision > first.revision);
}

async fn revoking_is_idempotent_and_says_what_it_did(fixture: Fixture) {
    let keys = fixture.keys();
    keys.insert(&key(7, KeyScope::Write)).expect("insert");
    let mut revoked = key(7, KeyScope::Write);
    revoked.revoked_at = Some(1_800_000_500);
    assert_eq!(
        keys.revoke(&id(7), 1_800_000_500).expect("revoke"),
        Revocation::Revoked(revoked.clone())
    );
    let after = keys.changes_since(0).expect("changes").revision;
    assert_eq!(
        keys.revoke(&id(7), 1_800_000_900).expect("revoke again"),
        Revocation::AlreadyRevoked(revoked.clone()),
        "the first revocation time stays"
    );
    assert_eq!(
        keys.changes_since(after).expect("changes").keys,
        vec![],
        "revoking again changes nothing"
    );
    assert_eq!(
        keys.revoke(&id(8), 1).expect("revoke"),
        Revocation::NotFound
    );
    assert_eq!(keys.list().expect("list"), vec![revoked]);
}

async fn last_use_only_moves_forward(fixture: Fixture) {
    let keys = fixture.keys();
    keys.insert(&key(1, KeyScope::Read)).expect("insert");
    let before = keys.changes_since(0).expect("changes").revision;
    keys.record_use(&[(id(1), 1_800_000_600), (id(99), 5)])
        .expect("record");
    keys.record_use(&[(id(1), 1_800_000_540)]).expect("record");
    assert_eq!(
        keys.list().expect("list")[0].last_used_at,
        Some(1_800_000_600)
    );
    assert_eq!(
        keys.changes_since(before).expect("changes").keys,
        vec![],
        "use is bookkeeping, not a change instances must read"
    );
}

/// Several writers at once: a reader that follows `changes_since` from revision to revision
/// ends up having seen every key.
async fn concurrent_writers_never_let_a_reader_miss_a_change(fixture: Fixture) {
    let keys: Arc<dyn KeyRegistry> = fixture.keys_arc();
    let writers: Vec<_> = (0..4_u32)
        .map(|writer| {
            let keys = Arc::clone(&keys);
            std::thread::spawn(move || {
                for n in 0..10 {
                    keys.insert(&key(1 + writer * 100 + n, KeyScope::Read))
                        .expect("insert");
                }
            })
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut revision = 0;
    // A deadline, not a number of rounds: on a busy machine the writers may not have run at all
    // while the reader goes through many empty rounds.
    eventually_blocking(
        std::time::Duration::from_secs(30),
        "all 40 keys seen through changes_since",
        || {
            let changes = keys.changes_since(revision).expect("changes");
            seen.extend(changes.keys.into_iter().map(|key| key.id));
            revision = changes.revision;
            if seen.len() >= 40 {
                Ok(())
            } else {
                Err(seen.len())
            }
        },
    );
    for writer in writers {
        writer.join().expect("writer");
    }
    assert_eq!(keys.changes_since(revision).expect("changes").keys, vec![]);
}

/// Two instances (two pools on one store) record the last use of the same keys at the same time,
/// each listing them in its own order, as two servers flushing their directories do: every
/// flush succeeds (rows locked in opposite orders would deadlock on PostgreSQL), and each key
/// keeps its latest use.
async fn two_instances_recording_the_same_keys_at_once_never_fail(fixture: Fixture) {
    const KEYS: u32 = 40;
    const ROUNDS: i64 = 30;
    let first = fixture.keys_arc();
    let second = open_storage(fixture.url()).keys;
    for n in 1..=KEYS {
        first.insert(&key(n, KeyScope::Read)).expect("insert");
    }
    let flushes = [(first, false, 0), (second, true, 1_000)].map(|(keys, reversed, offset)| {
        std::thread::spawn(move || {
            let mut ids: Vec<KeyId> = (1..=KEYS).map(id).collect();
            if reversed {
                ids.reverse();
            }
            for round in 0..ROUNDS {
                let at = 1_800_000_000 + offset + round;
                let uses: Vec<(KeyId, i64)> = ids.iter().map(|id| (id.clone(), at)).collect();
                keys.record_use(&uses)
                    .unwrap_or_else(|err| panic!("round {round}: {err:?}"));
            }
        })
    });
    for flush in flushes {
        flush.join().expect("every flush succeeds");
    }
    let latest = 1_800_000_000 + 1_000 + ROUNDS - 1;
    for stored in fixture.keys().list().expect("list") {
        assert_eq!(stored.last_used_at, Some(latest), "{}", stored.id);
    }
}
