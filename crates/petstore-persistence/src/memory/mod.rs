//! The `memory:` store: pets, orders, categories, events, keys, idempotency records and webhooks
//! kept in
//! the process, with the same contracts as
//! the database adapters minus durability (everything is gone on exit). Pets and orders share
//! one state under one lock, so an order's transaction changes both at once.

mod categories;
mod chunked_log;
mod events;
mod idempotency;
mod inventory;
mod keys;
mod orders;
mod pets;
mod records;
mod webhooks;

use std::collections::BTreeMap;

use petstore_application::{IdempotencyRecord, RecordPlan, Written};
use petstore_domain::{IdempotencyKey, KeyId, Order, Pet};

pub use categories::InMemoryCategoryRepository;
pub use events::InMemoryEventFeed;
pub use idempotency::InMemoryIdempotencyStore;
pub use inventory::InMemoryInventoryRepository;
pub use keys::InMemoryKeyRegistry;
pub use orders::InMemoryOrderRepository;
pub use pets::InMemoryPetRepository;
pub use webhooks::InMemoryWebhooks;

/// What one in-memory store holds: pets and orders in `BTreeMap`s keyed by id, so listing in id
/// order is a range scan, and the last pet id handed out (order ids are random).
#[derive(Debug, Default)]
struct State {
    pets: BTreeMap<i64, Pet>,
    /// Removed pets, in their last state, with when they went (seconds since the epoch): out of
    /// `pets`, so no read sees them.
    removed_pets: BTreeMap<i64, (Pet, i64)>,
    last_id: i64,
    orders: BTreeMap<i64, Order>,
    categories: categories::Categories,
    /// Every change's event, written under the same lock as the change.
    events: events::EventLog,
    /// Idempotency records, stored under the same lock as the writes they answer.
    records: records::Records,
    /// Webhook endpoints, their deliveries and the fan-out position.
    webhooks: webhooks::Webhooks,
}

impl State {
    /// The live record stored for `owner`'s `key` (stored at or after `expired_before`).
    fn live_record(
        &self,
        owner: &KeyId,
        key: &IdempotencyKey,
        expired_before: i64,
    ) -> Option<&IdempotencyRecord> {
        self.records
            .get(owner, key)
            .filter(|record| record.stored_at >= expired_before)
    }

    /// The live record stored for `record`'s key, if any; else stores `record` (replacing an
    /// expired one).
    fn insert_record_if_absent(
        &mut self,
        record: IdempotencyRecord,
        expired_before: i64,
    ) -> Option<IdempotencyRecord> {
        if let Some(earlier) = self.live_record(&record.owner, &record.key, expired_before) {
            return Some(earlier.clone());
        }
        self.records.insert(record);
        None
    }

    /// Carries out `write` with the record `plan` makes of its result, both under this one
    /// lock; or, when a live record for the plan's key is stored already, nothing, answering
    /// from that record. Under one lock, looking first costs nothing and undoes nothing.
    fn write_recorded<T, E>(
        &mut self,
        plan: Option<RecordPlan<T>>,
        write: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<Written<T>, E> {
        let Some(plan) = plan else {
            return Ok(Written::Done(write(self)?, None));
        };
        if let Some(earlier) = self.live_record(&plan.owner, &plan.key, plan.expired_before) {
            return Ok(Written::Earlier(earlier.clone()));
        }
        let result = write(self)?;
        let record = plan.record_for(&result);
        let response = record.response.clone();
        // No record for the key was live above, and the lock has been held since.
        self.records.insert(record);
        Ok(Written::Done(result, Some(response)))
    }
}
