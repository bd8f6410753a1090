//! SQLite WAL checkpoints on a thread of their own, so that no create waits for a whole one.
//!
//! By default SQLite folds the WAL back into the database file inside the commit that takes it
//! past 1,000 pages, and every other writer waits meanwhile (creates of over a second were
//! measured). Writers here never checkpoint (`wal_autocheckpoint=0`, see `connection.rs`); this
//! thread does, every [`INTERVAL`], on its own connection:
//!
//! - a `PASSIVE` checkpoint copies what no reader still needs into the database file, without
//!   blocking writers or readers;
//! - once the WAL holds [`RESTART_AFTER_PAGES`], a `RESTART` checkpoint copies the few pages
//!   committed since and starts the WAL over from its beginning. Under a steady stream of
//!   commits SQLite would otherwise never find a moment to start over, and the WAL would grow
//!   without bound (346 MB in one benchmark run). It holds writers back for the length of that
//!   short copy and one fsync, a few milliseconds, and takes the [`WriterGate`] first so the
//!   writer thread waits on the gate, woken the moment the restart ends, rather than in SQLite's
//!   busy handler, which sleeps in growing steps and overshoots.
//!
//! The WAL file is thus bounded to about [`RESTART_AFTER_PAGES`] pages plus what is committed
//! in one interval, and `journal_size_limit` trims it back after a burst.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Integer;

use super::connection::{AnyConnection, Manager};
use super::health::StoreHealth;

/// How often the WAL is checked and checkpointed.
pub(crate) const INTERVAL: Duration = Duration::from_millis(200);

/// WAL length (pages of 4 KiB: 4 MiB, SQLite's own checkpoint threshold) past which the WAL is
/// started over.
const RESTART_AFTER_PAGES: i32 = 1_000;

#[derive(QueryableByName)]
struct CheckpointResult {
    #[diesel(sql_type = Integer)]
    busy: i32,
    #[diesel(sql_type = Integer)]
    log: i32,
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

/// Held by the writer thread for each write transaction and by the checkpointer for each
/// `RESTART`, so the two take turns without SQLite's busy handler. Clones share the gate.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriterGate(Arc<Mutex<()>>);

impl WriterGate {
    pub(crate) fn enter(&self) -> MutexGuard<'_, ()> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The running checkpointer; it stops (after one last checkpoint) when this is dropped.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    _stop: mpsc::Sender<()>,
}

impl Checkpointer {
    /// Starts checkpointing the database `manager` connects to.
    pub(crate) fn start(
        manager: Manager,
        gate: WriterGate,
        health: StoreHealth,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("petstore-checkpoint".to_owned())
            .spawn(move || run(&manager, &gate, &health, &stopped))?;
        Ok(Self { _stop: stop })
    }
}

fn run(manager: &Manager, gate: &WriterGate, health: &StoreHealth, stopped: &mpsc::Receiver<()>) {
    let mut conn: Option<AnyConnection> = None;
    loop {
        let last = match stopped.recv_timeout(INTERVAL) {
            Err(RecvTimeoutError::Timeout) => false,
            // Every sender is gone: the repository was dropped.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
        };
        if conn.is_none() {
            conn = manager
                .establish()
                .map_err(|error| tracing::warn!(%error, "checkpointer cannot open the database"))
                .ok();
        }
        if let Some(open) = conn.as_mut() {
            if let Err(error) = checkpoint(open, gate) {
                // A full disk or a read-only file is the store's fault, logged once for the
                // episode, not every interval.
                if super::errors::fault_of(&error).is_some() {
                    health.report_error(&error);
                } else {
                    tracing::warn!(%error, "WAL checkpoint failed");
                }
                conn = None;
            }
        }
        if last {
            return;
        }
    }
}

fn checkpoint(conn: &mut AnyConnection, gate: &WriterGate) -> QueryResult<()> {
    let passive: CheckpointResult =
        diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result(conn)?;
    if passive.log >= RESTART_AFTER_PAGES {
        let _writer_waits = gate.enter();
        let restart: CheckpointResult =
            diesel::sql_query("PRAGMA wal_checkpoint(RESTART)").get_result(conn)?;
        if restart.busy != 0 {
            // A long read still needs the old pages; the next round tries again.
            tracing::debug!(
                pages = restart.log,
                copied = restart.checkpointed,
                "the WAL could not be restarted yet"
            );
        }
    }
    Ok(())
}
