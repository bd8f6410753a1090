//! SQLite WAL checkpoints on a thread of their own, which never hold up a create, whatever reads
//! run meanwhile.
//!
//! By default SQLite folds the WAL back into the database file inside the commit that takes it
//! past 1,000 pages, and every other writer waits meanwhile (`docs/benchmarks.md`). Writers here
//! never checkpoint (`wal_autocheckpoint=0`, see `connection.rs`); this thread does, every
//! [`INTERVAL`], on its own connection, which never waits for a lock (`busy_timeout=0`): a
//! checkpoint that cannot go on gives up at once and is tried again the next round.
//!
//! - A `PASSIVE` checkpoint copies every page no reader still needs into the database file,
//!   beside the writer and the readers, blocking neither. This is the bulk of the work.
//! - Once the WAL holds [`RESTART_AFTER_PAGES`], it is started over from its beginning: under a
//!   steady stream of commits SQLite would otherwise never find a moment to do so, and the WAL
//!   would grow without bound. The thread has the inline readers keep no snapshot meanwhile
//!   (`read_snapshot.rs`) and copies what their snapshots held with another `PASSIVE`
//!   checkpoint, then takes the [`WriterGate`] and runs a `RESTART` checkpoint, which copies
//!   the few pages committed since and starts the WAL over or, if a read under way still uses
//!   the WAL, gives up at once rather than wait for it while the writer waits for the gate. It
//!   tries again a millisecond later, once that read has ended, up to [`RESTART_ATTEMPTS`]
//!   times in a round: under steady reads one try in three or so meets one. Taking the gate
//!   first keeps the writer thread waiting on it, woken the moment the restart ends, rather
//!   than in SQLite's busy handler, which sleeps in growing steps and overshoots.
//!
//! A long read (a backup, a `.dump`, an operator's query) keeps the pages it may still read, so
//! while it lasts the WAL is neither copied past its snapshot nor started over; it grows with the
//! commits, and the writer goes on. The WAL file's size is published every round
//! ([`super::metrics::WAL_BYTES`]), and passing [`WAL_WARN_BYTES`] logs a warning once for the
//! episode (and an info line once it is back under), since only the operator can end that read;
//! the disk guard (`probe.rs`) is what bounds it. Without a long read the WAL stays about
//! [`RESTART_AFTER_PAGES`] pages plus what is committed in one interval, and `journal_size_limit`
//! trims the file back after a burst or a long read.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Integer;

use super::connection::{AnyConnection, Manager};
use super::health::StoreHealth;
use super::read_snapshot::Sweeper;

/// How often the WAL is checked and checkpointed.
pub(crate) const INTERVAL: Duration = Duration::from_millis(200);

/// WAL length (pages of 4 KiB: 4 MiB, SQLite's own checkpoint threshold) past which the WAL is
/// started over.
const RESTART_AFTER_PAGES: i32 = 1_000;

/// Tries at starting the WAL over in one round, before the next [`INTERVAL`].
const RESTART_ATTEMPTS: usize = 8;

/// The pause between two tries, while the writer goes on.
const BETWEEN_ATTEMPTS: Duration = Duration::from_millis(1);

/// WAL file size past which a warning is logged: four times the size `journal_size_limit`
/// trims it back to, which a read held open for long makes it reach (or one transaction of
/// that size).
const WAL_WARN_BYTES: u64 = 64 * 1024 * 1024;

#[derive(QueryableByName)]
struct CheckpointResult {
    #[diesel(sql_type = Integer)]
    busy: i32,
    #[diesel(sql_type = Integer)]
    log: i32,
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

impl CheckpointResult {
    /// Whether the WAL is long enough to start over and no reader needs any of it: every frame
    /// in it has been copied into the database file.
    fn ready_to_restart(&self) -> bool {
        // A checkpoint that could not start at all reports busy, and -1 for both counts.
        self.busy == 0 && self.log >= RESTART_AFTER_PAGES && self.checkpointed == self.log
    }
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
    /// The server's presence on the file, held for as long as the checkpointer runs, which is
    /// as long as the store serves (`presence.rs`).
    presence: std::sync::OnceLock<super::presence::Presence>,
}

impl Checkpointer {
    /// Starts checkpointing the database `manager` connects to.
    pub(crate) fn start(
        manager: Manager,
        gate: WriterGate,
        health: StoreHealth,
        readers: Arc<Sweeper>,
    ) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("petstore-checkpoint".to_owned())
            .spawn(move || run(&manager, &gate, &health, &readers, &stopped))?;
        Ok(Self {
            _stop: stop,
            presence: std::sync::OnceLock::new(),
        })
    }

    /// Holds the server's presence on the file at `path` from now on.
    pub(crate) fn hold_presence(&self, path: &Path) -> Result<(), String> {
        if self.presence.get().is_none() {
            let _ = self.presence.set(super::presence::Presence::hold(path)?);
        }
        Ok(())
    }
}

fn run(
    manager: &Manager,
    gate: &WriterGate,
    health: &StoreHealth,
    readers: &Sweeper,
    stopped: &mpsc::Receiver<()>,
) {
    let wal = manager.sqlite_path().map(wal_of);
    let mut watch = WalWatch::default();
    // Measured once before the first round, so the gauge is there from the start.
    if let Some(wal) = &wal {
        measure(wal, &mut watch);
    }
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
            if let Err(error) = checkpoint(open, gate, readers) {
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
        if let Some(wal) = &wal {
            measure(wal, &mut watch);
        }
        if last {
            return;
        }
    }
}

fn checkpoint(conn: &mut AnyConnection, gate: &WriterGate, readers: &Sweeper) -> QueryResult<()> {
    let mut copied = passive(conn)?;
    if copied.log < RESTART_AFTER_PAGES {
        return Ok(());
    }
    // The readers' snapshots (`read_snapshot.rs`) hold the frames committed since they began:
    // none is kept until the WAL is started over, and what they held is copied now, while the
    // writer goes on.
    let _readers_hold_none = readers.hold_none();
    for attempt in 0..RESTART_ATTEMPTS {
        if attempt > 0 {
            // The reads that were under way end within a moment; those that begin once every
            // frame is copied read the database file alone and do not hold the restart up.
            std::thread::sleep(BETWEEN_ATTEMPTS);
            readers.end_idle_now();
            copied = passive(conn)?;
            if copied.log < RESTART_AFTER_PAGES {
                // A writer started the WAL over itself, finding it all copied.
                return Ok(());
            }
        }
        if !copied.ready_to_restart() {
            continue;
        }
        let _writer_waits = gate.enter();
        let restart: CheckpointResult =
            diesel::sql_query("PRAGMA wal_checkpoint(RESTART)").get_result(conn)?;
        if restart.busy == 0 {
            return Ok(());
        }
    }
    tracing::debug!(
        pages = copied.log,
        copied = copied.checkpointed,
        "a read still needs part of the WAL; it is started over once no read does"
    );
    Ok(())
}

fn passive(conn: &mut AnyConnection) -> QueryResult<CheckpointResult> {
    diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result(conn)
}

/// The WAL file beside the database file `database`.
fn wal_of(database: &Path) -> PathBuf {
    let mut wal = database.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

/// Publishes the WAL file's size, and logs when it passes [`WAL_WARN_BYTES`] or is back under.
fn measure(wal: &Path, watch: &mut WalWatch) {
    // No file is an empty WAL: SQLite removes it when the last connection closes.
    let bytes = std::fs::metadata(wal).map_or(0, |meta| meta.len());
    super::metrics::wal_measured(bytes);
    match watch.observe(bytes) {
        Some(WalCrossing::Passed) => tracing::warn!(
            wal = %wal.display(),
            wal_bytes = bytes,
            "the SQLite WAL has grown past {} MiB: a long read on the database (a backup, a \
             `.dump`, an operator's query) holds pages it may still read, so the WAL cannot be \
             started over and grows with every commit until that read ends",
            WAL_WARN_BYTES >> 20
        ),
        Some(WalCrossing::BackUnder) => tracing::info!(
            wal = %wal.display(),
            wal_bytes = bytes,
            "the SQLite WAL is back under {} MiB",
            WAL_WARN_BYTES >> 20
        ),
        None => {}
    }
}

/// Which side of [`WAL_WARN_BYTES`] the WAL was on at the last measure, so that each crossing
/// is logged once rather than every round.
#[derive(Debug, Default)]
struct WalWatch {
    over: bool,
}

/// A crossing of [`WAL_WARN_BYTES`].
#[derive(Debug, PartialEq, Eq)]
enum WalCrossing {
    Passed,
    BackUnder,
}

impl WalWatch {
    /// The crossing, if any, that a WAL of `bytes` makes since the last measure.
    fn observe(&mut self, bytes: u64) -> Option<WalCrossing> {
        let over = bytes > WAL_WARN_BYTES;
        let was_over = std::mem::replace(&mut self.over, over);
        match (was_over, over) {
            (false, true) => Some(WalCrossing::Passed),
            (true, false) => Some(WalCrossing::BackUnder),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    #[test]
    fn the_wal_passing_the_warning_size_is_reported_once_per_episode() {
        let mut watch = WalWatch::default();
        let measures = [4, 60, 64, 65, 120, 300, 64, 16, 16, 70, 80, 0];
        let crossings: Vec<_> = measures
            .iter()
            .map(|mib| watch.observe(mib * MIB))
            .collect();
        use WalCrossing::{BackUnder, Passed};
        assert_eq!(
            crossings,
            [
                None,
                None,
                None,
                Some(Passed),
                None,
                None,
                Some(BackUnder),
                None,
                None,
                Some(Passed),
                None,
                Some(BackUnder),
            ]
        );
    }

    #[test]
    fn a_wal_that_never_grows_past_the_warning_size_is_never_reported() {
        let mut watch = WalWatch::default();
        for bytes in [0, 4 * MIB, 16 * MIB, WAL_WARN_BYTES, 1] {
            assert_eq!(watch.observe(bytes), None, "{bytes} bytes");
        }
    }

    #[test]
    fn the_wal_lies_beside_the_database_file() {
        assert_eq!(
            wal_of(Path::new("/var/lib/petstore/pets.db")),
            Path::new("/var/lib/petstore/pets.db-wal")
        );
    }

    fn result(busy: i32, log: i32, checkpointed: i32) -> CheckpointResult {
        CheckpointResult {
            busy,
            log,
            checkpointed,
        }
    }

    #[test]
    fn the_wal_is_started_over_only_when_long_and_needed_by_no_reader() {
        assert!(result(0, 1_000, 1_000).ready_to_restart());
        assert!(result(0, 5_000, 5_000).ready_to_restart());
        // A reader still needs the last pages.
        assert!(!result(0, 5_000, 4_990).ready_to_restart());
        // Short: the next rounds copy it, and a writer may start it over by itself.
        assert!(!result(0, 999, 999).ready_to_restart());
        // Another checkpoint was running: nothing is known.
        assert!(!result(1, -1, -1).ready_to_restart());
    }
}
