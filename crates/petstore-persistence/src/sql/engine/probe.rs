//! The store's probe: a thread that finds out, without any request paying for it, whether the
//! store works, so that `/readyz` and the refusals of `health.rs` report what is true now.
//!
//! - While a fault is known it retries every [`RETRY_INTERVAL`]: a new connection and a round
//!   trip for an unreachable PostgreSQL server; for SQLite one small write transaction, after
//!   (for a full disk) [`headroom`] free on its filesystem and a checkpoint, or (for a
//!   read-only file) the file writable for this process. The fault ends when that works.
//! - While none is known it checks a PostgreSQL server every [`WATCH_INTERVAL`] on a connection
//!   of its own (one round trip a second, whatever the traffic), so an outage is seen even when
//!   no request comes. SQLite faults are reported by the writes that meet them.
//!
//! Why writes are refused while the disk is full: the checkpointer copies the WAL into the
//! database file, which grows, so the checkpoint needs free space, while every create that
//! reaches SQLite appends to the WAL. Let through, the writers would take the freed space first,
//! the WAL could not be emptied (the checkpoint would have no room to copy it into the database
//! file), and every checkpoint and nearly every create would fail until more space was made.
//! So writes resume only once [`headroom`] is free (measured before the WAL gives its own space
//! back) and a `TRUNCATE` checkpoint has emptied the WAL.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::R2D2Connection;
use diesel::sql_types::Integer;
use petstore_application::StorageFault;

use super::checkpointer::WriterGate;
use super::connection::{AnyConnection, Manager};
use super::health::StoreHealth;

/// How often a known fault is retried.
pub(crate) const RETRY_INTERVAL: Duration = Duration::from_millis(250);

/// How often a PostgreSQL server thought reachable is checked.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_secs(1);

/// The most free space (bytes) a full disk must have again before writes resume: room for the
/// WAL to grow to the size at which the checkpointer starts it over (4 MiB, `checkpointer.rs`)
/// and as much again for what is committed meanwhile and for the database file to grow. With
/// less, the writes would fill the disk again within a second under load.
pub(crate) const MAX_HEADROOM: u64 = 8 * 1024 * 1024;

/// The least: room for a few hundred commits after the WAL is emptied.
pub(crate) const MIN_HEADROOM: u64 = 512 * 1024;

/// Free space (bytes) a full disk of `filesystem_bytes` must have again before writes resume.
///
/// An eighth of the filesystem, within [`MIN_HEADROOM`] and [`MAX_HEADROOM`]: on a filesystem of
/// 64 MiB or more that is the full [`MAX_HEADROOM`], while a small one, where the database leaves
/// less than that free even once everything else is deleted, still heals when a share of it is
/// free again, in proportion to how fast its own writes can fill it.
pub(crate) fn headroom(filesystem_bytes: u64) -> u64 {
    (filesystem_bytes / 8).clamp(MIN_HEADROOM, MAX_HEADROOM)
}

/// The running probe; it stops when this is dropped.
#[derive(Debug)]
pub(crate) struct Probe {
    _stop: mpsc::Sender<()>,
}

impl Probe {
    /// Starts probing the database `manager` connects to (a read-write connection).
    pub(crate) fn start(
        manager: Manager,
        health: StoreHealth,
        gate: WriterGate,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("petstore-probe".to_owned())
            .spawn(move || run(&manager, &health, &gate, &stopped))?;
        Ok(Self { _stop: stop })
    }
}

fn run(manager: &Manager, health: &StoreHealth, gate: &WriterGate, stopped: &mpsc::Receiver<()>) {
    let mut watch: Option<AnyConnection> = None;
    let mut watched = Instant::now();
    loop {
        // Short turns even while nothing is known, so a fault reported meanwhile is retried
        // within one of them; a turn with nothing to do costs an atomic load.
        match stopped.recv_timeout(RETRY_INTERVAL) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        match health.fault() {
            Some(fault) => {
                watch = None;
                match heal(manager, gate, fault) {
                    Ok(()) => health.recovered(),
                    // Why it is not over yet, for whoever turns DEBUG on (every 250 ms).
                    Err(Failure::Query(error)) => {
                        tracing::debug!(%error, "storage probe: still failing");
                        health.report_error(&error);
                    }
                    Err(Failure::Connect(error)) => {
                        tracing::debug!(%error, "storage probe: cannot connect yet");
                    }
                    Err(Failure::Room(error)) => {
                        tracing::debug!(%error, "storage probe: not enough free space yet");
                    }
                    Err(Failure::NotWritable(error)) => {
                        tracing::debug!(%error, "storage probe: the database file is read-only");
                    }
                }
            }
            None if manager.is_postgres() && watched.elapsed() >= WATCH_INTERVAL => {
                watched = Instant::now();
                if let Err(reason) = watch_postgres(manager, &mut watch) {
                    health.report(StorageFault::Unreachable, &reason);
                }
            }
            None => {}
        }
    }
}

/// Why a probe failed.
enum Failure {
    Connect(diesel::r2d2::Error),
    Query(diesel::result::Error),
    /// Not enough room yet after a full disk.
    Room(std::io::Error),
    /// The database file is still read-only for this process.
    NotWritable(std::io::Error),
}

/// One round trip on the kept connection; a connection found broken is replaced once.
fn watch_postgres(manager: &Manager, watch: &mut Option<AnyConnection>) -> Result<(), String> {
    if let Some(conn) = watch.as_mut() {
        if conn.ping().is_ok() {
            return Ok(());
        }
    }
    *watch = None;
    let mut conn = manager.establish().map_err(|error| error.to_string())?;
    conn.ping().map_err(|error| error.to_string())?;
    *watch = Some(conn);
    Ok(())
}

/// Whether the store works again: a new connection that answers; on SQLite one write, and after
/// a full disk, first room for [`headroom`] more and a checkpoint that empties the WAL.
fn heal(manager: &Manager, gate: &WriterGate, fault: StorageFault) -> Result<(), Failure> {
    if let (StorageFault::Full, Some(path)) = (fault, manager.sqlite_path()) {
        // Before the checkpoint: the space the WAL gives back is no space freed.
        has_headroom(path).map_err(Failure::Room)?;
    }
    if let (StorageFault::ReadOnly, Some(path)) = (fault, manager.sqlite_path()) {
        // SQLite may hand a new connection a descriptor another connection of this process
        // opened for writing before the file became read-only, so a write test alone can
        // succeed on a file no new connection may write.
        writable(path).map_err(Failure::NotWritable)?;
    }
    let mut conn = manager.establish().map_err(Failure::Connect)?;
    if manager.is_postgres() {
        return conn.ping().map_err(Failure::Query);
    }
    let _writer_waits = gate.enter();
    if fault == StorageFault::Full {
        // Every page the WAL holds goes to the database file while there is room for it, and
        // the WAL starts over empty: writes resume with all the free space there is.
        diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut conn)
            .map_err(Failure::Query)?;
    }
    write_test(&mut conn).map_err(Failure::Query)
}

/// Whether this process may open the file `database` for writing.
fn writable(database: &Path) -> std::io::Result<()> {
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    accessat(CWD, database, Access::WRITE_OK, AtFlags::EACCESS).map_err(std::io::Error::from)
}

/// Whether the filesystem holding `database` has its [`headroom`] free for this process.
fn has_headroom(database: &Path) -> std::io::Result<()> {
    let dir = match database.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let stats = rustix::fs::statvfs(dir)?;
    let free = stats.f_bavail.saturating_mul(stats.f_frsize);
    let needed = headroom(stats.f_blocks.saturating_mul(stats.f_frsize));
    if free >= needed {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "{free} bytes free, {needed} needed"
        )))
    }
}

#[derive(QueryableByName)]
struct UserVersion {
    #[diesel(sql_type = Integer)]
    user_version: i32,
}

/// One durable write that changes nothing: `user_version` (which nothing here uses) written
/// back as it is, in a write transaction, so the commit appends to the WAL and is fsynced like
/// a create's.
pub(crate) fn write_test(conn: &mut AnyConnection) -> QueryResult<()> {
    let AnyConnection::Sqlite(sqlite) = conn else {
        return Ok(());
    };
    let version = diesel::sql_query("PRAGMA user_version")
        .get_result::<UserVersion>(sqlite)?
        .user_version;
    sqlite.batch_execute("BEGIN IMMEDIATE")?;
    let written = sqlite.batch_execute(&format!("PRAGMA user_version = {version}"));
    let ended = match written {
        Ok(()) => sqlite.batch_execute("COMMIT"),
        Err(error) => Err(error),
    };
    if ended.is_err() {
        let _ = sqlite.batch_execute("ROLLBACK");
    }
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    #[test]
    fn a_large_filesystem_needs_the_full_headroom() {
        assert_eq!(headroom(64 * MIB), MAX_HEADROOM);
        assert_eq!(headroom(1024 * 1024 * MIB), MAX_HEADROOM);
    }

    #[test]
    fn a_small_filesystem_needs_an_eighth_of_itself() {
        assert_eq!(headroom(32 * MIB), 4 * MIB);
        assert_eq!(headroom(6 * MIB), 768 * 1024);
        // Where a database of 8 MiB leaves at most 4 MiB free.
        assert!(headroom(12 * MIB) < 4 * MIB);
    }

    #[test]
    fn a_tiny_filesystem_still_needs_the_least_headroom() {
        assert_eq!(headroom(2 * MIB), MIN_HEADROOM);
        assert_eq!(headroom(0), MIN_HEADROOM);
    }
}
