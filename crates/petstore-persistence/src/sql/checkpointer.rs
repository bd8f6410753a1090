//! SQLite WAL checkpoints on a thread of their own, so that no create waits for one.
//!
//! By default SQLite folds the WAL back into the database file inside the commit that takes it
//! past 1,000 pages, and every other writer waits meanwhile (a one-second create was measured).
//! Writers here never checkpoint (`wal_autocheckpoint=0`, see `connection.rs`); this thread runs a
//! `PASSIVE` checkpoint every [`INTERVAL`] on its own connection, which copies what no reader
//! still needs without blocking writers or readers. Should readers keep it from catching up
//! until the WAL passes [`WAL_PAGE_LIMIT`], a `TRUNCATE` checkpoint bounds the file (it waits for
//! readers and holds writers for that moment, so it is logged).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Integer;

use super::connection::{AnyConnection, Manager};

/// How often the WAL is checked and checkpointed.
pub(crate) const INTERVAL: Duration = Duration::from_millis(200);

/// WAL length (pages of 4 KiB: 64 MiB) past which readers are waited for.
const WAL_PAGE_LIMIT: i32 = 16_384;

#[derive(QueryableByName)]
struct CheckpointResult {
    #[diesel(sql_type = Integer)]
    busy: i32,
    #[diesel(sql_type = Integer)]
    log: i32,
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

/// The running checkpointer; it stops (after one last checkpoint) when this is dropped.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    _stop: mpsc::Sender<()>,
}

impl Checkpointer {
    /// Starts checkpointing the database `manager` connects to.
    pub(crate) fn start(manager: Manager) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("petstore-checkpoint".to_owned())
            .spawn(move || run(&manager, &stopped))?;
        Ok(Self { _stop: stop })
    }
}

fn run(manager: &Manager, stopped: &mpsc::Receiver<()>) {
    let mut conn: Option<AnyConnection> = None;
    loop {
        let last = match stopped.recv_timeout(INTERVAL) {
            Err(RecvTimeoutError::Timeout) => false,
            // Every sender is gone: the repository was dropped.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
        };
        if conn.is_none() {
            conn = manager
                .open()
                .map_err(|error| tracing::warn!(%error, "checkpointer cannot open the database"))
                .ok();
        }
        if let Some(open) = conn.as_mut() {
            if let Err(error) = checkpoint(open) {
                tracing::warn!(%error, "WAL checkpoint failed");
                conn = None;
            }
        }
        if last {
            return;
        }
    }
}

fn checkpoint(conn: &mut AnyConnection) -> QueryResult<()> {
    let passive: CheckpointResult =
        diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result(conn)?;
    if passive.log > WAL_PAGE_LIMIT && passive.checkpointed < passive.log {
        tracing::warn!(
            pages = passive.log,
            "the WAL outgrew its limit while readers held it; waiting for them to truncate it"
        );
        let truncate: CheckpointResult =
            diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)").get_result(conn)?;
        if truncate.busy != 0 {
            tracing::warn!(pages = truncate.log, "the WAL could not be truncated yet");
        }
    }
    Ok(())
}
