//! `petstore backup --to-dir DIR --every DURATION`: backups on a schedule, from the binary
//! itself, for a sidecar beside the server (the image has no shell to loop in, and a CronJob
//! cannot mount the server's ReadWriteOnce volume). One backup at start, then one every
//! interval; a failed one is logged and the next tick tries again; SIGTERM or SIGINT ends the
//! loop between backups, so a backup under way is finished first.

use std::time::Duration;

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::time::MissedTickBehavior;

use super::backup_dir::BackupDir;
use super::DataMoveError;
use crate::AppError;

/// Takes a backup into `backups` now and every `every` until SIGTERM or SIGINT.
pub(super) fn run(backups: &BackupDir, every: Duration) -> Result<(), AppError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DataMoveError::Schedule)?;
    runtime.block_on(async {
        let mut stop = StopSignals::listen()?;
        tracing::info!(
            dir = %backups.dir().display(),
            every = %humantime::format_duration(every),
            keep = backups.keep(),
            "backing up now and then at every interval"
        );
        backups.log_kept();
        let mut ticks = tokio::time::interval(every);
        // A backup that outlasts the interval delays the next rather than causing a burst.
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                signal = stop.next() => {
                    tracing::info!(signal, "stopped backing up");
                    return Ok(());
                }
            }
            // Blocking on this thread, which has nothing else to do: a signal arriving meanwhile
            // waits in its stream and ends the loop once the backup is finished. A failure was
            // logged; the next tick tries again.
            let _ = backups.take_logged();
        }
    })
}

/// SIGTERM (a container runtime's stop) and SIGINT (Ctrl-C), listened for from the start so
/// that none is missed during a backup.
struct StopSignals {
    terminate: Signal,
    interrupt: Signal,
}

impl StopSignals {
    fn listen() -> Result<Self, DataMoveError> {
        Ok(Self {
            terminate: signal(SignalKind::terminate()).map_err(DataMoveError::Schedule)?,
            interrupt: signal(SignalKind::interrupt()).map_err(DataMoveError::Schedule)?,
        })
    }

    /// Waits for the next one and says which came.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}
