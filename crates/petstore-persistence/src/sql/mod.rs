//! The diesel adapter: one repository implementation over [`connection::AnyConnection`], which is
//! either a PostgreSQL or a SQLite connection. Only connecting, per-connection settings,
//! migrations, checkpoints and the write-transaction flavour differ by backend; every query is
//! written once.

mod batch_insert;
mod blocking;
mod checkpointer;
mod connection;
mod errors;
mod group_commit;
mod group_read;
pub(crate) mod health;
mod idempotency_records;
mod idempotency_store;
mod key_registry;
pub(crate) mod metrics;
mod migrations;
mod multi_row;
mod order_repository;
mod pet_row;
mod pool;
mod probe;
mod queue;
mod read;
mod record_sweep;
mod repository;
mod schema;
mod store;
mod write_transaction;
mod writer_jobs;
mod writer_rounds;
mod writes;
mod written;

pub use idempotency_store::DieselIdempotencyStore;
pub use key_registry::DieselKeyRegistry;
pub use metrics::{describe_metrics, PoolMetrics};
pub use order_repository::DieselOrderRepository;
pub use repository::DieselPetRepository;
pub use store::{run_migrations, SqlStore};

type Pool = r2d2::Pool<connection::Manager>;
