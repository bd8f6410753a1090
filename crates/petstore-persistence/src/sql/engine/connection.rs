//! Connections: how a connection to either backend is opened, configured and checked, and the
//! generation that retires a pool's connections at once. The pool built from them is `pool.rs`;
//! reads that survive a closed connection are `read.rs`.
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
//! - `foreign_keys=ON`: SQLite leaves them off by default.
//!
//! and by [`SqliteRole`]: writers wait for the write lock (`busy_timeout`; writes also take it up
//! front, `BEGIN IMMEDIATE`) and never checkpoint (`wal_autocheckpoint=0`: the checkpointer
//! thread does, so no commit pays for one); inline readers are read-only and never wait
//! (`busy_timeout=0`), since they run on an async worker.
//!
//! Pooled connections carry the generation they were opened in. When a query finds its
//! PostgreSQL connection closed (a server restart closes them all), the generation moves on and
//! every older connection, idle or checked out, is dropped instead of handed out again: no
//! round trip per checkout to find out.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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

/// Runs `$body` with `$c` bound to the concrete connection of either backend. A fixed query run
/// this way is prepared once per connection and found again by its type; through
/// [`AnyConnection`] its SQL is written out on every call to look it up.
macro_rules! on_connection {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            crate::sql::engine::connection::AnyConnection::Sqlite($c) => $body,
            crate::sql::engine::connection::AnyConnection::Postgresql($c) => $body,
        }
    };
}
pub(crate) use on_connection;

/// How long a SQLite writer waits for another writer before giving up.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// Largest WAL file kept once it starts over (bytes); a longer one is cut back to this.
const SQLITE_JOURNAL_SIZE_LIMIT: u64 = 16 * 1024 * 1024;

/// What a SQLite connection is for; each gets the settings its job needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SqliteRole {
    /// Writes, migrations and reads that may wait: waits up to the busy timeout for the write
    /// lock, never checkpoints.
    ReadWrite,
    /// Reads answered on an async worker: read-only, and busy means "go to the blocking pool".
    InlineRead,
    /// The background checkpointer: never waits for a lock (a checkpoint that cannot go on gives
    /// up, and the writer is never held behind it), writes nothing of its own.
    Checkpoint,
}

/// Applies the per-connection SQLite settings for `role`.
///
/// Turning a new file to WAL needs exclusive access. When two processes open a new file at the
/// same moment, SQLite can answer "database is locked" at once, without waiting out the busy
/// timeout (it will not wait while that could deadlock), so the switch is retried here for as
/// long as the busy timeout. Once the file is in WAL mode the pragma is a no-op. Only writers
/// switch: the mode is stored in the file, and a reader opened before the switch follows it.
///
/// An inline reader waits like the others while it is being set up (on a pool's thread): its
/// first read of the schema can meet a writer turning a new file to WAL or migrating it, which
/// would else fail the connection at once ("database is locked", logged as a WARN on every
/// clean start). Only then does it stop waiting, for the reads it serves on async workers.
fn configure_sqlite(conn: &mut SqliteConnection, role: SqliteRole) -> QueryResult<()> {
    conn.batch_execute(&format!("PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};"))?;
    if role == SqliteRole::ReadWrite {
        let deadline = Instant::now() + Duration::from_millis(SQLITE_BUSY_TIMEOUT_MS.into());
        loop {
            match conn.batch_execute("PRAGMA journal_mode = WAL;") {
                Err(error)
                    if super::errors::is_unavailable(&error) && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                outcome => break outcome,
            }
        }?;
    }
    conn.batch_execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
    match role {
        SqliteRole::ReadWrite => conn.batch_execute(&format!(
            "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = {SQLITE_JOURNAL_SIZE_LIMIT}; \
             PRAGMA temp_store = MEMORY;"
        )),
        SqliteRole::InlineRead => conn.batch_execute(
            "PRAGMA schema_version; PRAGMA query_only = 1; PRAGMA busy_timeout = 0;",
        ),
        SqliteRole::Checkpoint => conn.batch_execute(&format!(
            "PRAGMA journal_size_limit = {SQLITE_JOURNAL_SIZE_LIMIT}; PRAGMA busy_timeout = 0;"
        )),
    }
}

/// Bounds what one request can cost a PostgreSQL session, set with `SET` on each new connection
/// rather than libpq's `options` so that it works through poolers that refuse startup options
/// and leaves the operator's `options`/`PGOPTIONS` alone:
/// - `statement_timeout`: the server cancels a statement running longer (a stalled server or a
///   lock queue), and the request answers 503.
/// - `idle_in_transaction_session_timeout`: a session left inside a transaction by an instance
///   that hung or lost the network is ended, so the insert-ordering lock it held (see
///   `pets/batch_insert.rs`) cannot stall the creates of every other instance for longer than
///   this.
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
        role: SqliteRole,
    },
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Postgres { shown, .. } => f.debug_tuple("Postgres").field(shown).finish(),
            Self::Sqlite { path, role } => f.debug_tuple("Sqlite").field(path).field(role).finish(),
        }
    }
}

/// The generation of a pool's connections: bumped when one is found closed, so that every
/// connection opened before is dropped rather than reused. Clones share the count.
#[derive(Debug, Clone, Default)]
pub(crate) struct Generations(Arc<AtomicU64>);

impl Generations {
    pub(crate) fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Retires every connection opened so far.
    pub(crate) fn retire_all(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// A pooled connection and the generation it was opened in.
pub(crate) struct Pooled {
    connection: AnyConnection,
    generation: u64,
    /// The read transaction an inline reader left open (`read_snapshot.rs`).
    pub(crate) snapshot: Option<Snapshot>,
}

/// A read transaction an inline reader left open between reads (`read_snapshot.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snapshot {
    /// The commits counted when it began: it holds every one of them.
    pub(crate) commits: u64,
    pub(crate) began: Instant,
}

impl Deref for Pooled {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.connection
    }
}

impl DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.connection
    }
}

/// What `is_valid` reports for a retired connection; not worth a log line.
pub(crate) const RETIRED: &str = "connection retired after another of its pool was found closed";

/// r2d2's view of [`Target`].
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
    generations: Generations,
}

impl Manager {
    pub(crate) fn new(target: Target, generations: Generations) -> Self {
        Self {
            target,
            generations,
        }
    }

    /// The SQLite file connections open, if that is the backend.
    pub(crate) fn sqlite_path(&self) -> Option<&std::path::Path> {
        match &self.target {
            Target::Sqlite { path, .. } => Some(path),
            Target::Postgres { .. } => None,
        }
    }

    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self.target, Target::Postgres { .. })
    }

    /// Opens a connection outside any pool (migrations, the checkpointer).
    pub(crate) fn establish(&self) -> Result<AnyConnection, PoolError> {
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
            Target::Sqlite { path, role } => {
                let path = path.to_str().ok_or_else(|| {
                    PoolError::ConnectionError(diesel::ConnectionError::BadConnection(format!(
                        "the SQLite path {} is not valid UTF-8",
                        path.display()
                    )))
                })?;
                let mut conn =
                    SqliteConnection::establish(path).map_err(PoolError::ConnectionError)?;
                configure_sqlite(&mut conn, *role).map_err(PoolError::QueryError)?;
                Ok(AnyConnection::Sqlite(conn))
            }
        }
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = PoolError;

    fn connect(&self) -> Result<Pooled, PoolError> {
        // Read before opening: a connection opened while its generation is retired is retired too.
        let generation = self.generations.current();
        Ok(Pooled {
            connection: self.establish()?,
            generation,
            snapshot: None,
        })
    }

    /// No round trip: a connection is valid until its generation is retired.
    fn is_valid(&self, conn: &mut Pooled) -> Result<(), PoolError> {
        if conn.generation == self.generations.current() {
            Ok(())
        } else {
            Err(PoolError::QueryError(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::ClosedConnection,
                Box::new(RETIRED.to_owned()),
            )))
        }
    }

    fn has_broken(&self, conn: &mut Pooled) -> bool {
        std::thread::panicking()
            || conn.generation != self.generations.current()
            || conn.connection.is_broken()
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
        let shown = format!("{:?}", Manager::new(target, Generations::default()));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("app:***@db"), "{shown}");
    }
}
