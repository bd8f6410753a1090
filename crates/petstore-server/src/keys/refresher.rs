//! The thread that keeps an instance's key directory current: it reads the registry's changes
//! every quarter second (so a revocation anywhere takes effect here within a second) and writes
//! the keys' last-use minutes every minute. Off the request path, and blocking by design.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use petstore_application::KeyDirectory;

/// How often the registry's changes are read.
pub const REFRESH_INTERVAL: Duration = Duration::from_millis(250);

/// How often last uses are written.
const RECORD_USES_INTERVAL: Duration = Duration::from_secs(60);

/// The running refresher; stops (and writes the last uses once more) when dropped.
#[derive(Debug)]
pub struct Refresher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Starts refreshing `directory` on a thread of its own.
pub fn spawn_refresher(directory: KeyDirectory) -> std::io::Result<Refresher> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("petstore-keys".into())
        .spawn(move || run(&directory, &stopped))?;
    Ok(Refresher {
        stop,
        thread: Some(thread),
    })
}

fn run(directory: &KeyDirectory, stop: &AtomicBool) {
    let mut failing = false;
    let mut uses_recorded = Instant::now();
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(REFRESH_INTERVAL);
        match directory.refresh() {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("the key registry is readable again");
            }
            Ok(_) => {}
            Err(err) if !failing => {
                failing = true;
                tracing::warn!(
                    error = %err,
                    "cannot read the key registry; keeping the keys known so far (revocations \
                     made meanwhile are not seen; /readyz reports it after a few seconds)"
                );
            }
            Err(_) => {}
        }
        if uses_recorded.elapsed() >= RECORD_USES_INTERVAL || stop.load(Ordering::Acquire) {
            uses_recorded = Instant::now();
            if let Err(err) = directory.record_uses() {
                tracing::warn!(error = %err, "cannot record when keys were last used; retrying later");
            }
        }
    }
}

impl Drop for Refresher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
