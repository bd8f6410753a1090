//! The writes other than creates as the writer thread runs them: a closure given the writer's
//! connection, which does its own write transaction (an order, an idempotency record, the
//! purge, the key registry's changes) and whose value goes back to the caller waiting for it.
//!
//! The closure must not wait for anything that needs the writer (it would wait for itself): it
//! works through the connection it is given and nothing else.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use petstore_application::RepositoryError;
use tokio::sync::oneshot;

use super::connection::AnyConnection;
use super::errors::ScrubbedMessage;
use super::queue::{self, BlockingReply, Reply};

/// Queues a job at once or refuses it (full, or the writer gone).
type Offer = dyn Fn(Box<dyn Job>) -> Result<(), RepositoryError> + Send + Sync;

/// The writer thread's queue as the writes other than creates see it: it takes jobs, whatever
/// kind of create the writer stores in groups. Cheap to clone.
#[derive(Clone)]
pub(crate) struct JobQueue {
    offer: Arc<Offer>,
    /// Who runs the jobs, for the error when it is gone.
    thread: &'static str,
}

impl std::fmt::Debug for JobQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobQueue")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

impl JobQueue {
    /// The queue `offer` puts jobs on, for the thread named `thread`.
    pub(crate) fn new(
        thread: &'static str,
        offer: impl Fn(Box<dyn Job>) -> Result<(), RepositoryError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            offer: Arc::new(offer),
            thread,
        }
    }

    /// Queues `work` to be run on the writer's connection, in turn with every other write, and
    /// waits for what it returns. `work` runs its own transaction on the connection it is
    /// given and waits for nothing else.
    pub(crate) async fn run<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        (self.offer)(job(work, Answer::Awaited(reply)))?;
        answer.await.map_err(|_| queue::stopped(self.thread))?
    }

    /// [`run`](Self::run) for a caller that may block its thread (not an async worker's, and
    /// never the writer's own).
    pub(crate) fn run_blocking<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        (self.offer)(job(work, Answer::Blocked(reply)))?;
        answer.recv().map_err(|_| queue::stopped(self.thread))?
    }
}

/// A write the writer thread runs on its connection, once.
pub(crate) trait Job: Send {
    /// Whether its caller is gone (an async caller's client hung up): nobody would be told what
    /// it did, so it is not run.
    fn is_abandoned(&self) -> bool;

    /// Runs the write on `conn`, or passes on why there is no connection, and answers the
    /// caller. A panic in the write is answered as an unexpected failure.
    fn run(self: Box<Self>, conn: Result<&mut AnyConnection, RepositoryError>);
}

/// Where the caller of a job waits.
pub(crate) enum Answer<T> {
    /// An async caller, awaiting its answer.
    Awaited(Reply<T>),
    /// A thread of its own, blocked until the answer comes.
    Blocked(BlockingReply<T>),
}

impl<T> Answer<T> {
    fn send(self, outcome: Result<T, RepositoryError>) {
        // A caller gone since is told nothing; what the write did stays done.
        let _ = match self {
            Self::Awaited(reply) => reply.send(outcome).map_err(drop),
            Self::Blocked(reply) => reply.send(outcome).map_err(drop),
        };
    }
}

/// `work`, answered through `answer`, as a job for the writer thread.
pub(crate) fn job<T, W>(work: W, answer: Answer<T>) -> Box<dyn Job>
where
    T: Send + 'static,
    W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
{
    Box::new(Task { work, answer })
}

struct Task<T, W> {
    work: W,
    answer: Answer<T>,
}

impl<T, W> Job for Task<T, W>
where
    T: Send,
    W: FnOnce(&mut AnyConnection) -> T + Send,
{
    fn is_abandoned(&self) -> bool {
        match &self.answer {
            Answer::Awaited(reply) => reply.is_closed(),
            // A blocked thread waits for as long as it takes.
            Answer::Blocked(_) => false,
        }
    }

    fn run(self: Box<Self>, conn: Result<&mut AnyConnection, RepositoryError>) {
        let Task { work, answer } = *self;
        let outcome = conn.and_then(|conn| {
            // A bug in one write must not stop the writer, which every later write needs.
            catch_unwind(AssertUnwindSafe(|| work(conn))).map_err(|_| {
                RepositoryError::Unexpected(Box::new(ScrubbedMessage(
                    "a write transaction panicked".to_owned(),
                )))
            })
        });
        answer.send(outcome);
    }
}

#[cfg(test)]
mod tests {
    use diesel::Connection;
    use tokio::sync::oneshot;

    use super::*;

    fn sqlite() -> AnyConnection {
        AnyConnection::Sqlite(
            diesel::SqliteConnection::establish(":memory:").expect("an in-memory database"),
        )
    }

    #[test]
    fn a_job_answers_its_caller_with_what_its_work_returned() {
        let (reply, mut answer) = oneshot::channel();
        let job = job(
            |conn| matches!(conn, AnyConnection::Sqlite(_)),
            Answer::Awaited(reply),
        );
        job.run(Ok(&mut sqlite()));
        assert!(matches!(answer.try_recv(), Ok(Ok(true))));
    }

    #[test]
    fn a_job_without_a_connection_runs_nothing_and_answers_why() {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ran_in_job = Arc::clone(&ran);
        let job = job(
            move |_| ran_in_job.store(true, std::sync::atomic::Ordering::SeqCst),
            Answer::Blocked(reply),
        );
        job.run(Err(RepositoryError::Unavailable(Box::new(
            ScrubbedMessage("no connection within the pool timeout".to_owned()),
        ))));
        assert!(matches!(
            answer.recv(),
            Ok(Err(RepositoryError::Unavailable(_)))
        ));
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn a_panicking_job_is_answered_as_unexpected_and_the_writer_goes_on() {
        let (reply, mut answer) = oneshot::channel::<Result<(), RepositoryError>>();
        let job = job(|_| panic!("a bug in a write"), Answer::Awaited(reply));
        job.run(Ok(&mut sqlite()));
        assert!(matches!(
            answer.try_recv(),
            Ok(Err(RepositoryError::Unexpected(_)))
        ));
    }

    #[test]
    fn a_job_whose_async_caller_went_away_is_abandoned_but_a_blocked_one_never_is() {
        let (reply, answer) = oneshot::channel::<Result<(), RepositoryError>>();
        let awaited = job(|_| (), Answer::Awaited(reply));
        assert!(!awaited.is_abandoned());
        drop(answer);
        assert!(awaited.is_abandoned());
        let (reply, answer) = std::sync::mpsc::sync_channel::<Result<(), RepositoryError>>(1);
        let blocked = job(|_| (), Answer::Blocked(reply));
        drop(answer);
        assert!(!blocked.is_abandoned());
    }
}
