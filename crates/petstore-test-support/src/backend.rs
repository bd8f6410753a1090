//! The storage a test server runs on, and the database each test gets of its own.

use std::path::Path;

use petstore_persistence::PoolSettings;
use petstore_test_database::TestDatabase;

/// Worker threads of every test server (and of the benchmark's bare actix-web ceiling).
pub const SERVER_WORKERS: usize = 2;

/// Where a test server keeps its pets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

/// The backend called `name` (`memory`, `sqlite`, `postgres`), as the backend matrix names them.
pub fn backend_named(name: &str) -> Backend {
    match name {
        "memory" => Backend::Memory,
        "sqlite" => Backend::Sqlite,
        "postgres" => Backend::Postgres,
        other => panic!("unknown backend {other}"),
    }
}

/// Storage for a test: the database URL and what keeps the database alive.
pub(crate) fn test_storage(backend: Backend, data_dir: &Path) -> (String, Option<TestDatabase>) {
    match backend {
        Backend::Memory => ("memory:".to_owned(), None),
        Backend::Sqlite => (
            format!("sqlite://{}", data_dir.join("pets.db").display()),
            None,
        ),
        Backend::Postgres => {
            let database = TestDatabase::migrated(|url| {
                let url = url.parse().expect("a PostgreSQL URL");
                petstore_persistence::migrate(&url, &PoolSettings::default())
                    .expect("migrate the template database");
            });
            (database.url().to_owned(), Some(database))
        }
    }
}
