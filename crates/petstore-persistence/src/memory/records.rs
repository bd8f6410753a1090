//! `Records`: the memory store's idempotency records, found by their owner and key, and also
//! kept in the order they were stored, so that a purge reads only the records it removes. A
//! purge that looked through every record held the store's one lock, which every request
//! takes, for as long as millions of records took to read, once a minute.

use std::collections::BTreeMap;

use petstore_application::IdempotencyRecord;
use petstore_domain::{IdempotencyKey, KeyId};

use super::chunked_log::ChunkedLog;

#[derive(Debug, Default)]
pub(super) struct Records {
    /// Each owner's records by key: a lookup borrows the owner and the key, where one map keyed
    /// by the pair needed both copied to look. Boxed, so that a B-tree node moving its entries
    /// aside for a new one moves pointers, not whole records with their digests.
    by_owner: BTreeMap<KeyId, BTreeMap<IdempotencyKey, Box<IdempotencyRecord>>>,
    /// When each record was stored, and its slot, in the order they were stored. A record that
    /// replaced an expired one leaves the older entry behind, which the purge skips.
    stored: ChunkedLog<(i64, KeyId, IdempotencyKey)>,
}

impl Records {
    pub(super) fn get(&self, owner: &KeyId, key: &IdempotencyKey) -> Option<&IdempotencyRecord> {
        self.by_owner.get(owner)?.get(key).map(|record| &**record)
    }

    /// Stores `record`, replacing any record of its owner's key.
    pub(super) fn insert(&mut self, record: IdempotencyRecord) {
        self.stored
            .push_back((record.stored_at, record.owner.clone(), record.key.clone()));
        let record = Box::new(record);
        match self.by_owner.get_mut(&record.owner) {
            Some(keys) => {
                keys.insert(record.key.clone(), record);
            }
            None => {
                let owner = record.owner.clone();
                let keys = BTreeMap::from([(record.key.clone(), record)]);
                self.by_owner.insert(owner, keys);
            }
        }
    }

    /// Removes up to `max` records stored before `cutoff`, oldest first, and says how many.
    ///
    /// Requests stamp their records before they take the store's lock, so the stored order can
    /// put a record a second older behind a newer one (or many behind, after the clock is set
    /// back); the purge stops at the first record still live, and the next round takes the
    /// ones behind it.
    pub(super) fn purge(&mut self, cutoff: i64, max: usize) -> usize {
        let mut removed = 0;
        while removed < max {
            match self.stored.front() {
                Some((stored_at, _, _)) if *stored_at < cutoff => {}
                _ => break,
            }
            let Some((_, owner, key)) = self.stored.pop_front() else {
                break;
            };
            let Some(keys) = self.by_owner.get_mut(&owner) else {
                continue;
            };
            // The record in the slot now may be a later one that replaced this entry's.
            if keys
                .get(&key)
                .is_some_and(|record| record.stored_at < cutoff)
            {
                keys.remove(&key);
                removed += 1;
                if keys.is_empty() {
                    self.by_owner.remove(&owner);
                }
            }
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
    fn a_record_that_replaced_an_expired_one_outlives_the_old_entry() {
        let alice = owner('a');
        let mut records = Records::default();
        records.insert(record(&alice, "k1", 10));
        records.insert(record(&alice, "k1", 50));
        assert_eq!(
            records.purge(20, 10),
            0,
            "the old entry's record is gone already"
        );
        assert_eq!(stored_at(&records, &alice, "k1"), Some(50));
        assert_eq!(records.purge(60, 10), 1);
        assert_eq!(stored_at(&records, &alice, "k1"), None);
        assert!(
            records.by_owner.is_empty(),
            "an owner without records is dropped"
        );
    }

    #[test]
    fn a_live_record_ahead_holds_back_older_ones_until_it_expires() {
        let alice = owner('a');
        let mut records = Records::default();
        records.insert(record(&alice, "k1", 30));
        records.insert(record(&alice, "k2", 10));
        assert_eq!(records.purge(20, 10), 0);
        assert_eq!(stored_at(&records, &alice, "k2"), Some(10));
        assert_eq!(records.purge(40, 10), 2);
    }
}
