//! Test-only helpers for storage: a database of its own for every PostgreSQL test, control over
//! the throwaway cluster for outage tests, and SQLite files in temporary directories.
//!
//! PostgreSQL tests find their server through `TEST_DATABASE_URL`, which
//! `tests/support/with-postgres.sh` (and so `make test`) sets after starting a throwaway cluster.
//! Without it they fail loudly instead of skipping: a suite that silently does not run proves
//! nothing. Databases are created and dropped with the `psql` client, so this crate needs no
//! database driver of its own.

mod postgres;
mod sqlite;

pub use postgres::{unreachable_postgres_url, ClusterControl, StoppedCluster, TestDatabase};
pub use sqlite::TestSqliteFile;
