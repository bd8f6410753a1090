//! `Records`: the memory store's idempotency records, found by their owner and key, and also
//! ordered by when they were stored, so that a purge reads only the records it removes. A purge
//! that looked through every record held the store's one lock, which every request takes, for
//! as long as millions of records took to read, once a minute.

use std::collections::BTreeMap;

use petstore_application::IdempotencyRecord;
use petstore_domain::{IdempotencyKey, KeyId};

#[derive(Debug, Default)]
pub(super) struct Records {
    /// Each owner's records by key: a lookup borrows the owner and the key, where one map keyed
    /// by the pair needed both copied to look. Boxed, so that a B-tree node moving its entries
    /// aside for a new one moves pointers, not whole records with their digests.
    by_owner: BTreeMap<KeyId, BTreeMap<IdempotencyKey, Box<Stored>>>,
    /// Every record's slot, by when it was stored and then by the order records were stored
    /// in (so records of the same second each have their own entry). Requests stamp their
    /// records before they take the store's lock, so the order stored alone could put an older
    /// record behind a newer one.
    by_age: BTreeMap<Age, (KeyId, IdempotencyKey)>,
    stored: u64,
}

/// When a record was stored (seconds since the epoch), and how many were stored before it.
type Age = (i64, u64);

#[derive(Debug)]
struct Stored {
    record: IdempotencyRecord,
    age: Age,
}

impl Records {
    pub(super) fn get(&self, owner: &KeyId, key: &IdempotencyKey) -> Option<&IdempotencyRecord> {
        let stored = self.by_owner.get(owner)?.get(key)?;
        Some(&stored.record)
    }

    /// Stores `record`, replacing any record of its owner's key.
    pub(super) fn insert(&mut self, record: IdempotencyRecord) {
        let age = (record.stored_at, self.stored);
        self.stored += 1;
        self.by_age
            .insert(age, (record.owner.clone(), record.key.clone()));
        let key = record.key.clone();
        let stored = Box::new(Stored { record, age });
        let replaced = match self.by_owner.get_mut(&stored.record.owner) {
            Some(keys) => keys.insert(key, stored),
            None => {
                let owner = stored.record.owner.clone();
                self.by_owner.insert(owner, BTreeMap::from([(key, stored)]));
                None
            }
        };
        if let Some(replaced) = replaced {
            self.by_age.remove(&replaced.age);
        }
    }

    /// Removes up to `max` records stored before `cutoff`, oldest first, and says how many.
    pub(super) fn purge(&mut self, cutoff: i64, max: usize) -> usize {
        let mut removed = 0;
        while removed < max {
            let Some(oldest) = self.by_age.first_entry() else {
                break;
            };
            if oldest.key().0 >= cutoff {
                break;
            }
            let (owner, key) = oldest.remove();
            if let Some(keys) = self.by_owner.get_mut(&owner) {
                keys.remove(&key);
                if keys.is_empty() {
                    self.by_owner.remove(&owner);
                }
            }
            removed += 1;
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use petstore_application::{Fingerprint, StoredResponse};

    use super::*;

    fn owner(digit: char) -> KeyId {
        KeyId::parse(&digit.to_string().repeat(KeyId::LEN)).unwrap()
    }

    fn record(owner: &KeyId, key: &str, stored_at: i64) -> IdempotencyRecord {
        IdempotencyRecord {
            owner: owner.clone(),
            key: IdempotencyKey::parse(key).unwrap(),
            fingerprint: Fingerprint([0; 32]),
            response: StoredResponse {
                status: 201,
                headers: Vec::new(),
                body: Vec::new(),
            },
            stored_at,
        }
    }

    fn stored_at(records: &Records, owner: &KeyId, key: &str) -> Option<i64> {
        let key = IdempotencyKey::parse(key).unwrap();
        records.get(owner, &key).map(|record| record.stored_at)
    }

    #[test]
    fn finds_each_owners_record_by_its_key() {
        let (alice, bob) = (owner('a'), owner('b'));
        let mut records = Records::default();
        records.insert(record(&alice, "k1", 10));
        records.insert(record(&bob, "k1", 11));
        assert_eq!(stored_at(&records, &alice, "k1"), Some(10));
        assert_eq!(stored_at(&records, &bob, "k1"), Some(11));
        assert_eq!(stored_at(&records, &alice, "k2"), None);
        assert_eq!(stored_at(&records, &owner('c'), "k1"), None);
    }

    #[test]
    fn purges_only_records_stored_before_the_cutoff_oldest_first_in_batches() {
        let alice = owner('a');
        let mut records = Records::default();
        for (index, key) in ["k1", "k2", "k3", "k4"].into_iter().enumerate() {
            records.insert(record(&alice, key, 10 + index as i64));
        }
        assert_eq!(records.purge(13, 2), 2, "a batch stops at its size");
        assert_eq!(stored_at(&records, &alice, "k1"), None);
        assert_eq!(stored_at(&records, &alice, "k2"), None);
        assert_eq!(
            records.purge(13, 2),
            1,
            "then the one left before the cutoff"
        );
        assert_eq!(stored_at(&records, &alice, "k3"), None);
        assert_eq!(stored_at(&records, &alice, "k4"), Some(13));
        assert_eq!(records.purge(13, 2), 0);
    }

    #[test]
    fn a_record_that_replaced_an_expired_one_is_purged_at_its_own_age() {
        let alice = owner('a');
        let mut records = Records::default();
        records.insert(record(&alice, "k1", 10));
        records.insert(record(&alice, "k1", 50));
        assert_eq!(
            records.by_age.len(),
            1,
            "the replaced record's age is dropped"
        );
        assert_eq!(records.purge(20, 10), 0);
        assert_eq!(stored_at(&records, &alice, "k1"), Some(50));
        assert_eq!(records.purge(60, 10), 1);
        assert_eq!(stored_at(&records, &alice, "k1"), None);
        assert!(
            records.by_owner.is_empty(),
            "an owner without records is dropped"
        );
    }

    #[test]
    fn a_record_stored_after_a_newer_one_is_purged_by_its_own_age() {
        let alice = owner('a');
        let mut records = Records::default();
        records.insert(record(&alice, "k1", 30));
        records.insert(record(&alice, "k2", 10));
        assert_eq!(records.purge(20, 10), 1);
        assert_eq!(stored_at(&records, &alice, "k2"), None);
        assert_eq!(stored_at(&records, &alice, "k1"), Some(30));
    }
}
