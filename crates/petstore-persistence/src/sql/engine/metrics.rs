//! What storage counts, through the `metrics` facade (a no-op until the composition root installs
//! a recorder): how long requests wait for a pooled connection, how big each group commit is
//! and how long it takes, the pool's connections in use and idle, and the size of SQLite's WAL.

use std::time::{Duration, Instant};

use petstore_application::StorageFault;

use super::health::StoreHealth;

use super::queue::Depth;
use super::Pool;

/// Seconds spent waiting for a pooled connection, by `use` (`read` or `write`).
pub const CONNECTION_WAIT: &str = "petstore_db_connection_wait_seconds";
/// Pets stored per group commit.
pub const BATCH_SIZE: &str = "petstore_db_create_batch_size";
/// Seconds per group commit, from checkout to commit.
pub const COMMIT_DURATION: &str = "petstore_db_create_commit_seconds";
/// Pool connections, by `state` (`in_use`, `idle`).
pub const CONNECTIONS: &str = "petstore_db_connections";
/// Writes waiting in the writer thread's queue (the name predates other writes joining it, and
/// dashboards use it).
pub const CREATE_QUEUE_DEPTH: &str = "petstore_db_create_queue_depth";
/// Bytes of the SQLite WAL file, measured by the checkpointer every round.
pub const WAL_BYTES: &str = "petstore_sqlite_wal_bytes";

/// Gives each family storage records its `# HELP` text. Call once the recorder is installed.
pub fn describe_metrics() {
    use super::health::{FAULTS, IN_FAULT};
    metrics::describe_histogram!(
        CONNECTION_WAIT,
        "Seconds spent waiting for a pooled database connection, by use (read or write)."
    );
    metrics::describe_histogram!(BATCH_SIZE, "Pets stored per group commit.");
    metrics::describe_histogram!(
        COMMIT_DURATION,
        "Seconds per group commit of creates, from checkout to commit."
    );
    metrics::describe_gauge!(
        CONNECTIONS,
        "Database pool connections, by state (in_use, idle)."
    );
    metrics::describe_gauge!(
        CREATE_QUEUE_DEPTH,
        "Writes waiting for the writer thread: creates, and on SQLite every other write too."
    );
    metrics::describe_gauge!(
        WAL_BYTES,
        "Bytes of the SQLite WAL file; it grows past about 16 MiB only while a long read holds it."
    );
    metrics::describe_counter!(
        FAULTS,
        "Storage fault episodes since start, by fault (unreachable, full, read_only)."
    );
    metrics::describe_gauge!(
        IN_FAULT,
        "1 while storage is in the fault named by the fault label, else 0."
    );
}

/// Checks a connection out of `pool`, recording the wait as `purpose`.
pub(crate) fn checkout(
    pool: &Pool,
    health: Option<&StoreHealth>,
    purpose: &'static str,
) -> Result<r2d2::PooledConnection<super::connection::Manager>, r2d2::Error> {
    let started = Instant::now();
    let conn = match health {
        Some(health) => get(pool, health),
        None => pool.get(),
    };
    metrics::histogram!(CONNECTION_WAIT, "use" => purpose).record(started.elapsed().as_secs_f64());
    conn
}

/// How long a checkout waits at a time before looking whether the server is known unreachable.
const CHECKOUT_SLICE: Duration = Duration::from_millis(50);

/// A connection within the pool's timeout, given up as soon as the store's probe or pool knows
/// the server is unreachable: a request already waiting when the outage is noticed answers
/// within [`CHECKOUT_SLICE`] rather than at the end of the timeout.
fn get(
    pool: &Pool,
    health: &StoreHealth,
) -> Result<r2d2::PooledConnection<super::connection::Manager>, r2d2::Error> {
    let deadline = Instant::now() + pool.connection_timeout();
    loop {
        let slice = deadline
            .saturating_duration_since(Instant::now())
            .min(CHECKOUT_SLICE);
        match pool.get_timeout(slice) {
            Ok(conn) => return Ok(conn),
            Err(error)
                if Instant::now() >= deadline
                    || health.fault() == Some(StorageFault::Unreachable) =>
            {
                return Err(error)
            }
            Err(_) => {}
        }
    }
}

/// Records one group commit of `size` pets that took since `started`.
pub(crate) fn group_committed(size: usize, started: Instant) {
    metrics::histogram!(BATCH_SIZE).record(size as f64);
    metrics::histogram!(COMMIT_DURATION).record(started.elapsed().as_secs_f64());
}

/// Records the size of the SQLite WAL file.
pub(crate) fn wal_measured(bytes: u64) {
    metrics::gauge!(WAL_BYTES).set(bytes as f64);
}

/// Sets the pool gauges from the pool's state now (called when metrics are scraped).
fn record_pool_state(pool: &Pool) {
    let state = pool.state();
    let idle = f64::from(state.idle_connections);
    let in_use = f64::from(state.connections.saturating_sub(state.idle_connections));
    metrics::gauge!(CONNECTIONS, "state" => "in_use").set(in_use);
    metrics::gauge!(CONNECTIONS, "state" => "idle").set(idle);
}

/// A handle on what the pool and the create queue hold now: sets their gauges when asked (at
/// each scrape), and tells tests what they wait for.
#[derive(Clone)]
pub struct PoolMetrics {
    pool: Pool,
    creates: Depth,
}

impl PoolMetrics {
    pub(crate) fn new(pool: Pool, creates: Depth) -> Self {
        Self { pool, creates }
    }

    /// Sets `petstore_db_connections` and `petstore_db_create_queue_depth` from their state now.
    pub fn record(&self) {
        record_pool_state(&self.pool);
        metrics::gauge!(CREATE_QUEUE_DEPTH).set(self.queued_creates() as f64);
    }

    /// Connections checked out of the pool now (the writer's included).
    pub fn connections_in_use(&self) -> u32 {
        let state = self.pool.state();
        state.connections.saturating_sub(state.idle_connections)
    }

    /// Creates waiting for the writer thread now.
    pub fn queued_creates(&self) -> usize {
        self.creates.get()
    }
}

impl std::fmt::Debug for PoolMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolMetrics").finish_non_exhaustive()
    }
}
