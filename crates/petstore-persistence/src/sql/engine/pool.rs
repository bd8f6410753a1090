//! The r2d2 pools of [`Manager`] connections: how they are built for a database URL and its
//! settings, and where their background connection failures go (the log, or the store's
//! health when a PostgreSQL server refuses or does not answer).

use std::fmt;

use diesel::r2d2::Error as PoolError;

use super::connection::{Generations, Manager, SqliteRole, Target, RETIRED};
use super::health::StoreHealth;
use super::Pool;
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// A pool of connections from `manager`. Checkouts are checked against the connection's
/// generation only (no round trip, see `connection.rs`). With `health`, a PostgreSQL server
/// refusing a new connection marks the store unreachable.
pub(crate) fn build_pool(
    manager: Manager,
    url: &DatabaseUrl,
    max_size: u32,
    min_idle: u32,
    settings: &PoolSettings,
    health: Option<StoreHealth>,
) -> Pool {
    r2d2::Pool::builder()
        .max_size(max_size)
        // With 0, connections are opened on demand, so a down database costs no background
        // retries until someone asks for it.
        .min_idle(Some(min_idle))
        .connection_timeout(settings.checkout_timeout)
        .test_on_check_out(true)
        .error_handler(Box::new(LogConnectionErrors {
            database: url.clone(),
            health,
        }))
        .build_unchecked(manager)
}

pub(crate) fn manager_for(
    url: &DatabaseUrl,
    settings: &PoolSettings,
    role: SqliteRole,
    generations: &Generations,
) -> Result<Manager, StorageError> {
    let target = match url {
        DatabaseUrl::Postgres(pg) => Target::Postgres {
            libpq_url: pg.for_libpq(settings),
            shown: pg.redacted(),
            statement_timeout: Some(settings.statement_timeout).filter(|limit| !limit.is_zero()),
        },
        DatabaseUrl::Sqlite(path) => Target::Sqlite {
            path: path.clone(),
            role,
        },
        DatabaseUrl::Memory => {
            return Err(StorageError::InvalidDatabaseUrl {
                reason: "`memory:` is not a SQL database; use the in-memory repository".into(),
            })
        }
    };
    Ok(Manager::new(target, generations.clone()))
}

/// Sends r2d2's background connection failures to the log instead of the `log` crate, which
/// nothing here listens to. The message may quote the URL, so it is scrubbed first.
pub(crate) struct LogConnectionErrors {
    pub(crate) database: DatabaseUrl,
    /// Told when a PostgreSQL server refuses or does not answer a new connection.
    pub(crate) health: Option<StoreHealth>,
}

impl fmt::Debug for LogConnectionErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogConnectionErrors")
            .field("database", &self.database)
            .finish()
    }
}

impl r2d2::HandleError<PoolError> for LogConnectionErrors {
    fn handle_error(&self, error: PoolError) {
        if let PoolError::QueryError(diesel::result::Error::DatabaseError(_, info)) = &error {
            if info.message() == RETIRED {
                return;
            }
        }
        if let (PoolError::ConnectionError(_), DatabaseUrl::Postgres(_), Some(health)) =
            (&error, &self.database, &self.health)
        {
            // Logged there, once per episode.
            health.report(
                petstore_application::StorageFault::Unreachable,
                &error.to_string(),
            );
            return;
        }
        tracing::warn!(
            database = %self.database,
            error = %self.database.scrub(&error.to_string()),
            "could not open a database connection"
        );
    }
}
