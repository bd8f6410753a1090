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
    /// Most creates waiting for the group commit (see `sql/group_commit.rs`); one more is
    /// refused at once as unavailable rather than queued without bound.
    pub write_queue: usize,
}

impl PoolSettings {
    pub const DEFAULT_MAX_SIZE: u32 = 10;
    pub const DEFAULT_CHECKOUT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);
    pub const DEFAULT_WRITE_QUEUE: usize = 1024;
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: Self::DEFAULT_MAX_SIZE,
            checkout_timeout: Self::DEFAULT_CHECKOUT_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
            write_queue: Self::DEFAULT_WRITE_QUEUE,
        }
    }
}
