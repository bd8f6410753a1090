//! The bounded queues between the async callers and the storage threads (the writer, the
//! PostgreSQL readers): a request is queued without waiting or refused at once, then awaits its
//! answer; a thread takes whatever is queued as one group.

use std::sync::Arc;

use petstore_application::RepositoryError;
use tokio::sync::{mpsc, oneshot};

use super::errors::Detail;

/// Where a request waits for its answer.
pub(crate) type Reply<T> = oneshot::Sender<Result<T, RepositoryError>>;

/// Queues what `request` builds around its reply channel and waits for the answer. A full queue
/// is `Unavailable` at once; `thread` names who answers, for the error when it is gone.
pub(crate) async fn ask<T, R>(
    queue: &mpsc::Sender<R>,
    thread: &str,
    request: impl FnOnce(Reply<T>) -> R,
) -> Result<T, RepositoryError> {
    let (reply, answer) = oneshot::channel();
    queue
        .try_send(request(reply))
        .map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => RepositoryError::Unavailable(Box::new(Detail(
                format!("the queue of the {thread} is full"),
            ))),
            mpsc::error::TrySendError::Closed(_) => stopped(thread),
        })?;
    answer.await.map_err(|_| stopped(thread))?
}

fn stopped(thread: &str) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(Detail(format!("the {thread} stopped"))))
}

/// Waits for a request, then takes every one queued behind it, `max` at most; `None` once every
/// sender is gone.
pub(crate) fn take_group<R>(queue: &mut mpsc::Receiver<R>, max: usize) -> Option<Vec<R>> {
    let mut group = vec![queue.blocking_recv()?];
    while group.len() < max {
        match queue.try_recv() {
            Ok(request) => group.push(request),
            Err(_) => break,
        }
    }
    Some(group)
}

/// How many requests wait in a queue now (0 once its thread has stopped), read without keeping
/// the thread alive: for a gauge and for tests that wait until requests have queued.
#[derive(Clone)]
pub(crate) struct Depth(Arc<dyn Fn() -> usize + Send + Sync>);

impl Depth {
    pub(crate) fn of<R: Send + 'static>(queue: &mpsc::Sender<R>) -> Self {
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
