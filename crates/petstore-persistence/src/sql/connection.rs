//! Connections and the pool: how a connection to either backend is opened, configured and
//! checked.
//!
//! We manage connections ourselves instead of using diesel's `ConnectionManager<AnyConnection>`
//! because `MultiConnection::establish` tries every backend in turn and drops their errors: a
//! `postgres://` URL whose server is down would be retried as a SQLite file name and the real
//! reason (refused, timed out, bad password) lost.
//!
//! SQLite settings, applied to every connection (they are per connection, not per file):
//! - `journal_mode=WAL`: readers never block the writer, nor the writer readers.
//! - `synchronous=FULL`: a commit is fsynced to the WAL file before it returns, so a 201 means
//!   the pet is on disk: it survives the process being killed (`kill -9`) and also an OS crash
//!   or power loss. `NORMAL` would spare that fsync but could lose the latest commits to a
//!   power loss, after the client was told they were stored.
//! - `busy_timeout`: a writer waiting for the write lock sleeps and retries instead of failing
//!   with "database is locked"; writes also take the lock up front (`BEGIN IMMEDIATE`, see
//!   `repository.rs`) so a waiting transaction never has to be abandoned half way.
//! - `foreign_keys=ON`: SQLite leaves them off by default.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::r2d2::{Error as PoolError, R2D2Connection};
use diesel::{Connection, PgConnection, QueryResult, SqliteConnection};

/// A connection to whichever backend the database URL chose.
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Postgresql(PgConnection),
    Sqlite(SqliteConnection),
}

/// How long a SQLite writer waits for another writer before giving up.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// Applies the per-connection SQLite settings.
///
/// Turning a new file to WAL needs exclusive access. When two processes open a new file at the
/// same moment, SQLite can answer "database is locked" at once, without waiting out the busy
/// timeout (it will not wait while that could deadlock), so the switch is retried here for as
/// long as the busy timeout. Once the file is in WAL mode the pragma is a no-op.
fn configure_sqlite(conn: &mut SqliteConnection) -> QueryResult<()> {
    conn.batch_execute(&format!("PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};"))?;
    let deadline = Instant::now() + Duration::from_millis(SQLITE_BUSY_TIMEOUT_MS.into());
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL;") {
            Err(error) if super::errors::is_unavailable(&error) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            outcome => break outcome,
        }
    }?;
    conn.batch_execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
}

/// Bounds what one request can cost a PostgreSQL session, set with `SET` on each new connection
/// rather than libpq's `options` so that it works through poolers that refuse startup options
/// and leaves the operator's `options`/`PGOPTIONS` alone:
/// - `statement_timeout`: the server cancels a statement running longer (a stalled server or a
///   lock queue), and the request answers 503.
/// - `idle_in_transaction_session_timeout`: a session left inside a transaction by an instance
///   that hung or lost the network is ended, so the insert-ordering lock it held (see
///   `repository.rs`) cannot stall the creates of every other instance for longer than this.
fn configure_postgres(conn: &mut PgConnection, limit: Duration) -> QueryResult<()> {
    let ms = limit.as_millis();
    conn.batch_execute(&format!(
        "SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms};"
    ))
}

/// Where connections go. Holds the libpq URL, password included, so `Debug` shows only the
/// redacted form.
pub(crate) enum Target {
    Postgres {
        libpq_url: String,
        shown: String,
        /// The request time limit (`None`: unbounded), applied to each new session.
        statement_timeout: Option<Duration>,
    },
    Sqlite {
        path: PathBuf,
    },
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Postgres { shown, .. } => f.debug_tuple("Postgres").field(shown).finish(),
            Self::Sqlite { path } => f.debug_tuple("Sqlite").field(path).finish(),
        }
    }
}

/// r2d2's view of [`Target`].
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
}

impl Manager {
    pub(crate) fn new(target: Target) -> Self {
        Self { target }
    }

    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self.target, Target::Postgres { .. })
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = AnyConnection;
    type Error = PoolError;

    fn connect(&self) -> Result<AnyConnection, PoolError> {
        match &self.target {
            Target::Postgres {
                libpq_url,
                statement_timeout,
                ..
            } => {
                let mut conn =
                    PgConnection::establish(libpq_url).map_err(PoolError::ConnectionError)?;
                if let Some(limit) = statement_timeout {
                    configure_postgres(&mut conn, *limit).map_err(PoolError::QueryError)?;
                }
                Ok(AnyConnection::Postgresql(conn))
            }
            Target::Sqlite { path } => {
                let path = path.to_str().ok_or_else(|| {
                    PoolError::ConnectionError(diesel::ConnectionError::BadConnection(format!(
                        "the SQLite path {} is not valid UTF-8",
                        path.display()
                    )))
                })?;
                let mut conn =
                    SqliteConnection::establish(path).map_err(PoolError::ConnectionError)?;
                configure_sqlite(&mut conn).map_err(PoolError::QueryError)?;
                Ok(AnyConnection::Sqlite(conn))
            }
        }
    }

    fn is_valid(&self, conn: &mut AnyConnection) -> Result<(), PoolError> {
        conn.ping().map_err(PoolError::QueryError)
    }

    fn has_broken(&self, conn: &mut AnyConnection) -> bool {
        std::thread::panicking() || conn.is_broken()
    }
}

/// Sends r2d2's background connection failures to the log instead of the `log` crate, which
/// nothing here listens to. The message may quote the URL, so it is scrubbed first.
pub(crate) struct LogConnectionErrors {
    pub(crate) database: crate::DatabaseUrl,
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
        tracing::warn!(
            database = %self.database,
            error = %self.database.scrub(&error.to_string()),
            "could not open a database connection"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_libpq_url() {
        let target = Target::Postgres {
            libpq_url: "postgres://app:hunter2@db/p?connect_timeout=5".into(),
            shown: "postgres://app:***@db/p".into(),
            statement_timeout: None,
        };
        let shown = format!("{:?}", Manager::new(target));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("app:***@db"), "{shown}");
    }
}
