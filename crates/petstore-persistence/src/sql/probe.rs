//! The store's probe: a thread that finds out, without any request paying for it, whether the
//! store works, so that `/readyz` and the refusals of `health.rs` report what is true now.
//!
//! - While a fault is known it retries every [`RETRY_INTERVAL`]: a new connection and a round
//!   trip for an unreachable PostgreSQL server; for SQLite a checkpoint that folds the WAL into
//!   the database file and truncates it, then one small write transaction. The fault ends when
//!   that works.
//! - While none is known it checks a PostgreSQL server every [`WATCH_INTERVAL`] on a connection
//!   of its own (one round trip a second, whatever the traffic), so an outage is seen even when
//!   no request comes. SQLite faults are reported by the writes that meet them.
//!
//! Why the checkpoint before the write: once the disk is full, every create that still reached
//! SQLite appended to the WAL until it failed, and the checkpoint needs free space to copy the
//! WAL into the database file. With writes let through, the space an operator frees is eaten
//! again by the WAL before the next checkpoint runs, which then fails, every 200 ms, for as
//! long as creates keep coming. Writes are refused while the fault lasts, so the freed space is
//! the checkpoint's; once it has truncated the WAL, the space the WAL held is free as well.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

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
    loop {
        let interval = if health.fault().is_some() {
            RETRY_INTERVAL
        } else {
            WATCH_INTERVAL
        };
        match stopped.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        match health.fault() {
            Some(_) => {
                watch = None;
                match heal(manager, gate) {
                    Ok(()) => health.recovered(),
                    Err(Failure::Query(error)) => health.report_error(&error),
                    Err(Failure::Connect(_)) => {}
                }
            }
            None if manager.is_postgres() => {
                if let Err(reason) = watch_postgres(manager, &mut watch) {
                    health.report(StorageFault::Unreachable, &reason);
                }
            }
            None => {}
        }
    }
}

/// Why a probe failed.
pub(crate) enum Failure {
    Connect(diesel::r2d2::Error),
    Query(diesel::result::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(error) => error.fmt(f),
            Self::Query(error) => error.fmt(f),
        }
    }
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

/// Whether the store works again: a new connection that answers, and on SQLite one write.
fn heal(manager: &Manager, gate: &WriterGate) -> Result<(), Failure> {
    let mut conn = manager.establish().map_err(Failure::Connect)?;
    if manager.is_postgres() {
        return conn.ping().map_err(Failure::Query);
    }
    let _writer_waits = gate.enter();
    // Busy (a long read) is no failure: the write below tells whether there is room.
    diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(&mut conn)
        .map_err(Failure::Query)?;
    write_test(&mut conn).map_err(Failure::Query)
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
