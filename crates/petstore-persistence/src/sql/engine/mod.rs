//! The machinery every SQL resource shares: connections and their pools, the writer thread with
//! its group commit and its queue of other writes, reads that survive a lost connection, write
//! transactions, the store's health and its probe, SQLite's checkpointer, the migrations, the
//! error translation and the metrics. It knows no resource: the pets' creates reach the group
//! commit through [`group_commit::Group`].

pub(crate) mod backup;
pub(crate) mod backup_stamp;
pub(crate) mod blocking;
pub(crate) mod checkpointer;
pub(crate) mod connection;
pub(crate) mod errors;
pub(crate) mod group_commit;
pub(crate) mod health;
pub(crate) mod in_use;
pub(crate) mod metrics;
pub(crate) mod migrations;
pub(crate) mod multi_row;
pub(crate) mod outbox;
pub(crate) mod pool;
pub(crate) mod presence;
pub(crate) mod probe;
pub(crate) mod queue;
pub(crate) mod read;
pub(crate) mod read_snapshot;
pub(crate) mod restore;
pub(crate) mod sqlite_file;
pub(crate) mod write_transaction;
mod writer_jobs;
mod writer_rounds;
pub(crate) mod writes;

/// A pool of connections to one database, of either backend.
pub(crate) type Pool = r2d2::Pool<connection::Manager>;
