//! How big the connection pool is and how long callers wait on it.

use std::time::Duration;

/// Pool sizing and timeouts. The server maps its flags and environment onto this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most connections one process keeps open.
    pub max_size: u32,
    /// How long a request waits for a free (and working) connection before the storage counts
    /// as unavailable.
    pub checkout_timeout: Duration,
    /// How long one attempt to open a PostgreSQL connection may take.
    pub connect_timeout: Duration,
    /// How long one PostgreSQL statement may run, and how long sent data may go unacknowledged
    /// by the server, before the request counts as unavailable. Zero leaves both unbounded.
    pub statement_timeout: Duration,
    /// Most requests waiting in each of the storage's queues: creates for the group commit
    /// (`sql/engine/group_commit.rs`) and, on PostgreSQL, reads for the reader threads
    /// (`sql/pets/group_read.rs`). One more is refused at once as unavailable rather than queued
    /// without bound.
    pub queue_size: usize,
}

impl PoolSettings {
    pub const DEFAULT_MAX_SIZE: u32 = 10;
    pub const DEFAULT_CHECKOUT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_QUEUE_SIZE: usize = 1024;
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: Self::DEFAULT_MAX_SIZE,
            checkout_timeout: Self::DEFAULT_CHECKOUT_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
            queue_size: Self::DEFAULT_QUEUE_SIZE,
        }
    }
}
