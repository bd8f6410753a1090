//! The writes other than creates as the writer thread runs them: a closure given the writer's
//! connection, which does its own write transaction (an order, a pet's change, an idempotency
//! record, the purge, the key registry's changes) and whose value goes back to the caller
//! waiting for it.
//!
//! A job either commits alone, answered as soon as it returns, or shares its commit
//! ([`Commit::Shared`]): the writer runs the shared jobs queued together inside one transaction
//! of its own, where each job's transaction is a savepoint (`write_transaction.rs`), and holds
//! each answer ([`Held`]) until that transaction's commit, which turns a failed commit into
//! every job's failure.
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
use super::write_transaction::{open_levels, roll_back_to};

/// Queues a job at once or refuses it (full, or the writer gone).
type Offer = dyn Fn(Box<dyn Job>, Commit) -> Result<(), RepositoryError> + Send + Sync;

/// Whose commit stores a job's write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// Its own: the job runs alone, in its own transaction (the idempotency store's writes and
    /// their purge, the key registry).
    Own,
    /// One it shares with the other shared jobs queued with it: its transaction is a savepoint
    /// of the writer's, and it is answered after the writer's commit.
    Shared,
}

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
        offer: impl Fn(Box<dyn Job>, Commit) -> Result<(), RepositoryError> + Send + Sync + 'static,
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
        self.run_committed_by(Commit::Own, work).await
    }

    /// [`run`](Self::run) for a `work` whose write transaction may be a savepoint of one it
    /// shares with the other such writes queued with it: what it returns comes back once that
    /// transaction committed, and a failed commit fails it. `work` does its writes in
    /// [`in_write_transaction`](super::write_transaction::in_write_transaction) and nothing
    /// outside it.
    pub(crate) async fn run_shared<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        self.run_committed_by(Commit::Shared, work).await
    }

    async fn run_committed_by<T, W>(&self, commit: Commit, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        (self.offer)(job(work, Answer::Awaited(reply)), commit)?;
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
        (self.offer)(job(work, Answer::Blocked(reply)), Commit::Own)?;
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

    /// Runs the write inside the transaction open on `conn`, and holds the answer until that
    /// transaction's commit. A panic in the write is answered as an unexpected failure, and
    /// what it left open of its own transaction rolled back.
    fn run_in_group(self: Box<Self>, conn: &mut AnyConnection) -> Held;
}

/// A job's answer, held until the commit of the transaction the job wrote in.
#[must_use = "the caller waits until its answer is released"]
pub(crate) struct Held(Box<dyn FnOnce(Result<(), RepositoryError>) + Send>);

impl Held {
    /// Answers the caller: the job's outcome once `commit` stored its write, else the failure
    /// of the commit (never a success for a write that was not stored).
    pub(crate) fn release(self, commit: Result<(), RepositoryError>) {
        (self.0)(commit);
    }
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
    T: Send + 'static,
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
        let outcome = conn.and_then(|conn| guarded(work, conn));
        answer.send(outcome);
    }

    fn run_in_group(self: Box<Self>, conn: &mut AnyConnection) -> Held {
        let Task { work, answer } = *self;
        let levels = open_levels(conn);
        let outcome = guarded(work, conn);
        if let (Err(_), Some(levels)) = (&outcome, levels) {
            // What the write began of its own and did not end is never to be committed; a
            // rollback that fails leaves diesel lost, which the group finds out.
            let _ = roll_back_to(conn, levels);
        }
        Held(Box::new(move |commit| answer.send(commit.and(outcome))))
    }
}

/// `work` run on `conn`; a panic in it answered as an unexpected failure, since a bug in one
/// write must not stop the writer, which every later write needs.
fn guarded<T, W>(work: W, conn: &mut AnyConnection) -> Result<T, RepositoryError>
where
    W: FnOnce(&mut AnyConnection) -> T,
{
    catch_unwind(AssertUnwindSafe(|| work(conn))).map_err(|_| {
        RepositoryError::Unexpected(Box::new(ScrubbedMessage(
            "a write transaction panicked".to_owned(),
        )))
    })
}

#[cfg(test)]
mod tests {
    use diesel::connection::TransactionManager;
    use diesel::{Connection, RunQueryDsl};
    use tokio::sync::oneshot;

    use super::*;
    use crate::sql::engine::write_transaction::{in_write_transaction, no_turn};

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

    /// A SQLite database in memory with a table `t`, inside a transaction as the writer opens
    /// one around a group.
    fn in_a_group() -> AnyConnection {
        let mut conn = sqlite();
        diesel::connection::SimpleConnection::batch_execute(
            &mut conn,
            "CREATE TABLE t (n INTEGER NOT NULL)",
        )
        .expect("a table");
        <<AnyConnection as Connection>::TransactionManager as TransactionManager<_>>::begin_transaction(
            &mut conn,
        )
        .expect("begin");
        assert_eq!(open_levels(&mut conn), Some(1));
        conn
    }

    fn rows(conn: &mut AnyConnection) -> i64 {
        use diesel::dsl::sql;
        use diesel::sql_types::BigInt;
        diesel::select(sql::<BigInt>("(SELECT count(*) FROM t)"))
            .get_result(conn)
            .expect("count")
    }

    fn insert_one(conn: &mut AnyConnection) -> diesel::QueryResult<()> {
        diesel::sql_query("INSERT INTO t (n) VALUES (1)")
            .execute(conn)
            .map(drop)
    }

    /// A job that inserts a row in its own write transaction, run in a group on `conn`, and
    /// where its caller waits.
    fn inserting_in_a_group(
        conn: &mut AnyConnection,
    ) -> (Held, oneshot::Receiver<Result<bool, RepositoryError>>) {
        let (reply, answer) = oneshot::channel();
        let held = job(
            |conn| in_write_transaction(conn, no_turn, insert_one).is_ok(),
            Answer::Awaited(reply),
        )
        .run_in_group(conn);
        (held, answer)
    }

    #[test]
    fn a_job_in_a_group_is_answered_only_once_its_commit_is_released() {
        let mut conn = in_a_group();
        let (held, mut answer) = inserting_in_a_group(&mut conn);
        assert!(answer.try_recv().is_err(), "answered before the commit");
        assert_eq!(open_levels(&mut conn), Some(1), "its savepoint is closed");
        assert_eq!(rows(&mut conn), 1);
        held.release(Ok(()));
        assert!(matches!(answer.try_recv(), Ok(Ok(true))));
    }

    #[test]
    fn a_job_in_a_group_whose_commit_failed_is_answered_with_the_failure() {
        let mut conn = in_a_group();
        let (held, mut answer) = inserting_in_a_group(&mut conn);
        held.release(Err(RepositoryError::Unavailable(Box::new(
            ScrubbedMessage("the commit failed".to_owned()),
        ))));
        assert!(matches!(
            answer.try_recv(),
            Ok(Err(RepositoryError::Unavailable(_)))
        ));
    }

    #[test]
    fn a_job_in_a_group_that_panics_half_way_leaves_nothing_of_its_own_to_commit() {
        let mut conn = in_a_group();
        insert_one(&mut conn).expect("a write of an earlier job");
        let (reply, mut answer) = oneshot::channel::<Result<(), RepositoryError>>();
        let held = job(
            |conn| {
                let _ = in_write_transaction::<()>(conn, no_turn, |conn| {
                    insert_one(conn)?;
                    panic!("a bug half-way through a write")
                });
            },
            Answer::Awaited(reply),
        )
        .run_in_group(&mut conn);
        assert_eq!(
            open_levels(&mut conn),
            Some(1),
            "its savepoint is rolled back"
        );
        assert_eq!(rows(&mut conn), 1, "the earlier job's write stays");
        held.release(Ok(()));
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
