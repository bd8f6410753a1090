//! Diesel's blocking work on tokio's blocking pool, in the caller's span: what is logged there
//! (a fault met, a transaction retried) belongs to the request that asked for it (its request id
//! and trace) in the log.

use tokio::task::JoinHandle;
use tracing::Span;

/// Runs `work` on the blocking pool inside the current span.
pub(crate) fn in_callers_span<T, W>(work: W) -> JoinHandle<T>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
{
    let span = Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(work))
}
