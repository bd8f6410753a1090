//! SQLite's inline readers keep their read transaction (their snapshot of the database) open
//! from one read to the next, since beginning and ending one takes a lock on the WAL index that
//! every connection of the process shares, the larger part of a point read's cost.
//!
//! A read reuses its connection's snapshot unless
//! - a write of this process committed since the snapshot began: every SQLite write
//!   transaction counts its commit ([`count_commit`]) before it is answered, so a client's next
//!   read sees what its answer acknowledged;
//! - the snapshot is [`MAX_AGE`] old, so a change to the pets another process commits (an
//!   operator's `sqlite3` shell) is seen within that time;
//! - a checkpointer is starting the WAL over, which no snapshot may hold up ([`HoldNone`]).
//!
//! A snapshot nobody reads is ended by a sweeper thread once it is [`MAX_AGE`] old, so an idle
//! reader never becomes the long read that keeps the WAL from being checkpointed. The sweeper
//! sleeps while no snapshot is open, until a reader leaves one open.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::QueryResult;

use super::connection::{AnyConnection, Pooled, Snapshot};
use super::Pool;

/// How long a snapshot is used at most, and kept open when idle.
const MAX_AGE: Duration = Duration::from_millis(10);

/// How often the sweeper looks for snapshots to end while any is open.
const SWEEP_INTERVAL: Duration = Duration::from_millis(5);

/// How often the sweeper looks while it has found none open.
const IDLE_LOOK: Duration = Duration::from_secs(1);

/// Commits of SQLite write transactions in this process. One count for every store: a commit to
/// another file only makes a reader begin a new snapshot sooner than it had to.
static COMMITS: AtomicU64 = AtomicU64::new(0);

/// Checkpointers starting a WAL over right now; while there is one, readers keep no snapshot.
static RESTARTS: AtomicUsize = AtomicUsize::new(0);

/// Counts a commit to a SQLite database: called after the commit returns and before the write
/// is answered.
pub(crate) fn count_commit() {
    COMMITS.fetch_add(1, Ordering::SeqCst);
}

/// Runs the read `query` on `conn` inside a snapshot: the one left open on it when it is still
/// fresh, otherwise a new one. The snapshot is left open for the next read, except after a
/// failure or while a checkpointer starts the WAL over; whether it was.
fn read_in_snapshot<T>(
    conn: &mut Pooled,
    query: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
) -> (QueryResult<T>, bool) {
    // Read before the snapshot begins: it then holds at least every commit counted so far.
    let commits = COMMITS.load(Ordering::SeqCst);
    let restarting = RESTARTS.load(Ordering::SeqCst) > 0;
    let fresh = !restarting
        && conn
            .snapshot
            .is_some_and(|open| open.commits == commits && open.began.elapsed() < MAX_AGE);
    if !fresh {
        end(conn);
        if let Err(error) = begin(conn) {
            return (Err(error), false);
        }
        conn.snapshot = Some(Snapshot {
            commits,
            began: Instant::now(),
        });
    }
    let outcome = query(conn);
    if outcome.is_err() || restarting || RESTARTS.load(Ordering::SeqCst) > 0 {
        end(conn);
        return (outcome, false);
    }
    (outcome, true)
}

/// Opens a read transaction; SQLite takes its snapshot at the first statement.
fn begin(conn: &mut AnyConnection) -> QueryResult<()> {
    conn.batch_execute("BEGIN").or_else(|_| {
        // A transaction a failed statement left open: end it and begin again.
        let _ = conn.batch_execute("ROLLBACK");
        conn.batch_execute("BEGIN")
    })
}

/// Ends the snapshot open on `conn`, if any. A read transaction has nothing to keep, and one
/// that cannot be ended (a connection gone bad) is found by [`begin`] on its next use.
fn end(conn: &mut Pooled) {
    if conn.snapshot.take().is_some() {
        let _ = conn.batch_execute("ROLLBACK");
    }
}

/// Ends every snapshot on an idle connection of `pool` that is at least `age` old (any, while
/// a checkpointer starts the WAL over); whether any is left open.
fn end_idle(pool: &Pool, age: Duration) -> bool {
    let mut idle = Vec::new();
    let mut left_open = false;
    let age = if RESTARTS.load(Ordering::SeqCst) > 0 {
        Duration::ZERO
    } else {
        age
    };
    while let Some(mut conn) = pool.try_get() {
        match conn.snapshot {
            Some(open) if open.began.elapsed() >= age => end(&mut conn),
            Some(_) => left_open = true,
            None => {}
        }
        // Held until every idle one was seen, or the pool would hand the same one back.
        idle.push(conn);
    }
    left_open
}

/// The sweeper thread of one pool of inline readers; it stops when this is dropped.
#[derive(Debug)]
pub(crate) struct Sweeper {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    pool: Pool,
    thread: OnceLock<Thread>,
    /// Set while the thread sleeps until a snapshot is opened.
    parked: AtomicBool,
    stopped: AtomicBool,
}

impl Sweeper {
    /// Starts sweeping the snapshots of `pool`'s connections.
    pub(crate) fn start(pool: Pool) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            pool,
            thread: OnceLock::new(),
            parked: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
        });
        let running = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("petstore-snapshots".to_owned())
            .spawn(move || sweep(&running))?;
        let _ = shared.thread.set(thread.thread().clone());
        Ok(Self { shared })
    }

    /// Runs the read `query` on an idle connection of the pool, inside its snapshot
    /// ([`read_in_snapshot`]); `None` when no connection is idle.
    pub(crate) fn try_read<T>(
        &self,
        query: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
    ) -> Option<QueryResult<T>> {
        let mut conn = self.shared.pool.try_get()?;
        let (outcome, left_open) = read_in_snapshot(&mut conn, query);
        // Back in the pool before the sweeper is woken, so that its look finds it.
        drop(conn);
        if left_open {
            self.wake();
        }
        Some(outcome)
    }

    /// Wakes the thread if it sleeps: a snapshot is left open.
    fn wake(&self) {
        if self.shared.parked.load(Ordering::SeqCst)
            && self.shared.parked.swap(false, Ordering::SeqCst)
        {
            self.unpark();
        }
    }

    fn unpark(&self) {
        if let Some(thread) = self.shared.thread.get() {
            thread.unpark();
        }
    }

    /// Keeps readers from holding a snapshot until the guard is dropped, and ends those open on
    /// idle connections now: a checkpoint can then start the WAL over.
    pub(crate) fn hold_none(&self) -> HoldNone {
        RESTARTS.fetch_add(1, Ordering::SeqCst);
        self.end_idle_now();
        HoldNone
    }

    /// Ends the snapshots open on idle connections now, whatever their age.
    pub(crate) fn end_idle_now(&self) {
        end_idle(&self.shared.pool, Duration::ZERO);
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.unpark();
    }
}

/// While it lives, readers end their snapshot after each read ([`Sweeper::hold_none`]).
#[derive(Debug)]
pub(crate) struct HoldNone;

impl Drop for HoldNone {
    fn drop(&mut self) {
        RESTARTS.fetch_sub(1, Ordering::SeqCst);
    }
}

fn sweep(shared: &Shared) {
    while !shared.stopped.load(Ordering::SeqCst) {
        std::thread::park_timeout(SWEEP_INTERVAL);
        if end_idle(&shared.pool, MAX_AGE) {
            continue;
        }
        // Nothing open: sleep until a reader leaves one open. Look again after saying so, or a
        // snapshot left open in between would wait; the timeout is a backstop only.
        shared.parked.store(true, Ordering::SeqCst);
        while shared.parked.load(Ordering::SeqCst) && !shared.stopped.load(Ordering::SeqCst) {
            if end_idle(&shared.pool, MAX_AGE) {
                shared.parked.store(false, Ordering::SeqCst);
                break;
            }
            std::thread::park_timeout(IDLE_LOOK);
        }
    }
}
