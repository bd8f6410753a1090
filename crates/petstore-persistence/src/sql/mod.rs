//! The diesel adapter for SQLite files and PostgreSQL servers: [`SqlStore`] owns one database's
//! pool, health and writer thread and hands each resource its repository.
//!
//! - `engine/`: the machinery every resource shares and that knows no resource (connections and
//!   pools, the writer with its group commit, write transactions, reads, health and probe, the
//!   checkpointer, migrations, errors, metrics).
//! - `pets/`, `orders/`, `keys/`, `idempotency/`, `webhooks/`: each resource's repository, rows
//!   and statements; `events/`, the feed of what their writes put in the outbox
//!   (`engine/outbox.rs`). `schema.rs` is the tables they share; a resource whose table no other reads
//!   declares it in its own file (`categories.rs`).
//!
//! Every query runs on [`engine::connection::AnyConnection`], either backend's connection, and
//! is written once where diesel allows. The backends differ in these places only:
//!
//! - the machinery: connecting and each connection's settings (`engine/connection.rs`,
//!   `engine/pool.rs`), the migrations' dialects (`engine/migrations.rs`), how a write
//!   transaction begins (`engine/write_transaction.rs`), where writes other than creates run
//!   (`engine/writes.rs`), the probe's checks (`engine/probe.rs`), SQLite's checkpointer and the
//!   wording of connection errors (`engine/errors.rs`);
//! - how pets are read: SQLite's inline readers, which keep their snapshot between reads
//!   (`engine/read_snapshot.rs`), or PostgreSQL's grouped reads (`store.rs` picks,
//!   `pets/repository.rs`, `pets/group_read.rs`);
//! - in resource code: the locks only PostgreSQL needs, each taken through
//!   `engine::write_transaction::lock_on_postgres` (SQLite's `BEGIN IMMEDIATE` already admits one
//!   writer at a time); the rows orders read `FOR UPDATE` on PostgreSQL (`orders/repository.rs`);
//!   the idempotency records' insert and purge, which take each backend's cheapest form
//!   (`idempotency/records.rs`, `idempotency/record_sweep.rs`); and statements with
//!   `RETURNING`, which diesel runs only on a concrete backend's connection.

mod categories;
mod engine;
mod events;
mod idempotency;
mod inventory;
mod keys;
mod orders;
mod pets;
mod schema;
mod store;
mod transfer;
mod webhooks;

pub use categories::DieselCategoryRepository;
pub use engine::backup::{backup_sqlite, BackupError, BackupReport};
pub use engine::backup_stamp::BackupStamp;
pub use engine::metrics::{describe_metrics, PoolMetrics};
pub use engine::restore::{restore_sqlite, RestoreChecks, RestoreError, RestoreReport};
pub use events::DieselEventFeed;
pub use idempotency::store::DieselIdempotencyStore;
pub use inventory::repository::DieselInventoryRepository;
pub use keys::registry::DieselKeyRegistry;
pub use orders::order_ids::OrderIds;
pub use orders::repository::DieselOrderRepository;
pub use pets::repository::DieselPetRepository;
pub use store::{run_migrations, SqlStore};
pub use transfer::{
    export, import, ExportError, ExportHeader, ExportSummary, ImportError, ImportOptions,
    ImportSummary,
};
pub use webhooks::{DieselDeliveryQueue, DieselWebhookRepository};
