//! The `memory:` store: pets, orders and keys kept in the process, with the same contracts as
//! the database adapters minus durability (everything is gone on exit). Pets and orders share
//! one state under one lock, so an order's transaction changes both at once.

mod keys;
mod orders;
mod pets;

use std::collections::BTreeMap;

use petstore_domain::{Order, Pet};

pub use keys::InMemoryKeyRegistry;
pub use orders::InMemoryOrderRepository;
pub use pets::InMemoryPetRepository;

/// What one in-memory store holds: pets and orders in `BTreeMap`s keyed by id, so listing in id
/// order is a range scan, and the last ids handed out.
#[derive(Debug, Default)]
struct State {
    pets: BTreeMap<i64, Pet>,
    last_id: i64,
    orders: BTreeMap<i64, Order>,
    last_order_id: i64,
}
