//! The bounded queues between the async callers and the storage threads (the writer, the
//! PostgreSQL readers): a request is queued without waiting or refused at once, then awaits its
//! answer; a thread takes whatever is queued as one group. Each request travels with its
//! caller's span, so what the thread logs about the work belongs to the caller's request (its
//! request id and trace) in the log.

use std::sync::Arc;

use petstore_application::RepositoryError;
use tokio::sync::{mpsc, oneshot};
use tracing::Span;

use super::errors::ScrubbedMessage;

/// Where a request waits for its answer.
pub(crate) type Reply<T> = oneshot::Sender<Result<T, RepositoryError>>;

/// Where a caller that is not async (a thread of its own) waits for its answer.
pub(crate) type BlockingReply<T> = std::sync::mpsc::SyncSender<Result<T, RepositoryError>>;

/// A request on a storage thread's queue, with the span of the caller that queued it.
#[derive(Debug)]
pub(crate) struct Queued<R> {
    pub(crate) request: R,
    span: Span,
}

impl<R> Queued<R> {
    /// `request`, queued by the caller in whose span this runs.
    pub(crate) fn new(request: R) -> Self {
        Self {
            request,
            span: Span::current(),
        }
    }

    /// The request and its caller's span, to be sorted by kind.
    pub(crate) fn into_parts(self) -> (R, Span) {
        (self.request, self.span)
    }

    /// What [`into_parts`](Self::into_parts) took apart, put back together.
    pub(crate) fn from_parts(request: R, span: Span) -> Self {
        Self { request, span }
    }
}

/// The sending and receiving ends of a storage thread's queue.
pub(crate) type Sender<R> = mpsc::Sender<Queued<R>>;
pub(crate) type Receiver<R> = mpsc::Receiver<Queued<R>>;

/// Queues what `request` builds around its reply channel and waits for the answer. A full queue
/// is `Unavailable` at once; `thread` names who answers, for the error when it is gone.
pub(crate) async fn ask<T, R>(
    queue: &Sender<R>,
    thread: &str,
    request: impl FnOnce(Reply<T>) -> R,
) -> Result<T, RepositoryError> {
    let (reply, answer) = oneshot::channel();
    offer(queue, thread, request(reply))?;
    answer.await.map_err(|_| stopped(thread))?
}

/// Queues `request` without waiting, or refuses it at once: `Unavailable` when the queue is
/// full, `Unexpected` when `thread` is gone.
pub(crate) fn offer<R>(queue: &Sender<R>, thread: &str, request: R) -> Result<(), RepositoryError> {
    queue
        .try_send(Queued::new(request))
        .map_err(|error| refused(&error, thread))
}

/// A request the queue did not take: full (unavailable at once) or its thread gone.
fn refused<R>(error: &mpsc::error::TrySendError<R>, thread: &str) -> RepositoryError {
    match error {
        mpsc::error::TrySendError::Full(_) => RepositoryError::Unavailable(Box::new(
            ScrubbedMessage(format!("the queue of the {thread} is full")),
        )),
        mpsc::error::TrySendError::Closed(_) => stopped(thread),
    }
}

/// The failure of a request whose storage thread `thread` stopped before answering it.
pub(crate) fn stopped(thread: &str) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!("the {thread} stopped"))))
}

/// Waits for a request, then takes every one queued behind it, `max` at most; `None` once every
/// sender is gone.
pub(crate) fn take_group<R>(queue: &mut Receiver<R>, max: usize) -> Option<Vec<Queued<R>>> {
    let mut group = vec![queue.blocking_recv()?];
    while group.len() < max {
        match queue.try_recv() {
            Ok(request) => group.push(request),
            Err(_) => break,
        }
    }
    Some(group)
}

/// The span a storage thread works on `group` in: its one caller's, or for several callers a
/// `storage_group` span (`requests` = how many) that follows from each caller's, so a line
/// logged about the whole group names every caller's trace (`linked_trace_ids` in JSON logs).
pub(crate) fn span_of<R>(group: &[Queued<R>]) -> Span {
    match group {
        [one] => one.span.clone(),
        _ => {
            let span = tracing::info_span!("storage_group", requests = group.len());
            for queued in group {
                span.follows_from(&queued.span);
            }
            span
        }
    }
}

/// How many requests wait in a queue now (0 once its thread has stopped), read without keeping
/// the thread alive: for a gauge and for tests that wait until requests have queued.
#[derive(Clone)]
pub(crate) struct Depth(Arc<dyn Fn() -> usize + Send + Sync>);

impl Depth {
    pub(crate) fn of<R: Send + 'static>(queue: &Sender<R>) -> Self {
        let queue = queue.downgrade();
        Self(Arc::new(move || {
            queue
                .upgrade()
                .map_or(0, |sender| sender.max_capacity() - sender.capacity())
        }))
    }

    pub(crate) fn get(&self) -> usize {
        (self.0)()
    }
}
