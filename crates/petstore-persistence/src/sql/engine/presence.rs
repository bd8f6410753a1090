//! A SQLite server's presence on its database file: one connection, opened in WAL mode once
//! the file is in WAL mode and held for as long as the store serves. An open WAL-mode
//! connection keeps a read lock on the `-shm` file, so `restore` and `import` (`in_use.rs`)
//! know a server uses the file from the moment it opened its store, before it serves its first
//! request (its other connections open in the background, or on first use).

use std::path::Path;
use std::sync::Mutex;

use diesel::connection::SimpleConnection as _;
use diesel::SqliteConnection;

use super::sqlite_file;

/// Held, never used: the lock is the point.
pub(crate) struct Presence {
    _connection: Mutex<SqliteConnection>,
}

impl std::fmt::Debug for Presence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Presence").finish_non_exhaustive()
    }
}

impl Presence {
    /// Opens the file at `path` and reads it once, which takes the shared lock.
    pub(crate) fn hold(path: &Path) -> Result<Self, String> {
        let mut conn = sqlite_file::open(path, 5_000)?;
        // In WAL mode first: a connection that opened the file while no `-wal` file was there
        // (the last connection before it deleted it on closing) would read it in rollback mode,
        // which lets go of the lock after each read.
        conn.batch_execute("PRAGMA journal_mode = WAL; SELECT count(*) FROM sqlite_schema;")
            .map_err(|err| err.to_string())?;
        Ok(Self {
            _connection: Mutex::new(conn),
        })
    }
}
