//! Test-only helpers for storage: a database of its own for every PostgreSQL test, control over
//! the throwaway cluster for outage tests, and SQLite files in temporary directories; and
//! [`eventually`], the poll every suite waits with (here so the persistence tests have it too).
//!
//! PostgreSQL tests find their server through `TEST_DATABASE_URL`, which
//! `tests/support/with-postgres.sh` (and so `make test`) sets after starting a throwaway cluster.
//! Without it they fail loudly instead of skipping: a suite that silently does not run proves
//! nothing. Databases are created and dropped with the `psql` client, so this crate needs no
//! database driver of its own.

mod cluster;
mod eventually;
mod postgres;
mod sqlite;
pub mod wal;

pub use cluster::PostgresCluster;
pub use eventually::{eventually, eventually_blocking, Deadline};
pub use postgres::{unreachable_postgres_url, ClusterControl, StoppedCluster, TestDatabase};
pub use sqlite::TestSqliteFile;

/// The backend matrix: declares each scenario `async fn CASE(fixture)` once and runs it on each
/// backend listed, as tests named `BACKEND::CASE`.
///
/// `setup` is an async function from a backend's name (`memory`, `sqlite`, `postgres`) to the
/// fixture the scenarios take; the attribute is the async test attribute to use. For example:
/// `on_backends!(#[tokio::test] crate::common::fixture, [memory, sqlite] finds_a_pet)`.
#[macro_export]
macro_rules! on_backends {
    (#[$test:meta] $setup:path, [$backend:ident $(, $more:ident)* $(,)?] $($case:ident),+ $(,)?) => {
        mod $backend {
            $(
                #[$test]
                async fn $case() {
                    super::$case($setup(stringify!($backend)).await).await;
                }
            )+
        }
        $crate::on_backends!(#[$test] $setup, [$($more),*] $($case),+);
    };
    (#[$test:meta] $setup:path, [] $($case:ident),+ $(,)?) => {};
}
