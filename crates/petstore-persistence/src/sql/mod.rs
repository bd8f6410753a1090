//! The diesel adapter: one repository implementation over [`connection::AnyConnection`], which is
//! either a PostgreSQL or a SQLite connection. Only connecting, per-connection settings,
//! migrations, checkpoints and the write-transaction flavour differ by backend; every query is
//! written once.

mod engine;
mod idempotency;
mod keys;
mod orders;
mod pets;
mod schema;
mod store;

pub use engine::metrics::{describe_metrics, PoolMetrics};
pub use idempotency::store::DieselIdempotencyStore;
pub use keys::registry::DieselKeyRegistry;
pub use orders::order_ids::OrderIds;
pub use orders::repository::DieselOrderRepository;
pub use pets::repository::DieselPetRepository;
pub use store::{run_migrations, SqlStore};
