//! The writer thread: the instance's creates, and on SQLite every other write too, go through it
//! in the order they were queued.
//!
//! - Group commit: concurrent creates are gathered and stored by one transaction, with one
//!   commit (one fsync, one turn of PostgreSQL's insert lock) for the whole group. Each request
//!   is answered only after that commit. There is no waiting to fill a group: while one commit
//!   is on its way to disk, the creates that arrive queue up and form the next group, so a lone
//!   create costs what it did before and a burst of them shares the commits.
//! - On SQLite, every other write too (pets' changes, orders, categories, idempotency records
//!   and their purge, the key registry; `writes.rs`) is run as a job on the writer's
//!   connection, after the group of its round (`writer_rounds.rs`). SQLite has one write lock;
//!   a write on a connection of its own would wait for it in SQLite's busy handler, which
//!   sleeps in growing steps, while the writer takes the lock again the moment it lets go, and
//!   after the busy timeout fail with "database is locked". On the writer's queue it waits its
//!   turn instead, and is answered.
//! - Shared commits: the jobs that may share one (a pet's change, an order's transaction, a
//!   category's write: the writes of `recorded_write.rs`; `writer_jobs.rs`) queued together run
//!   in one transaction of the writer's, each in a savepoint of its own, so a job that is
//!   refused or fails rolls back only its own; one commit stores them all, and each is
//!   answered after it, every one with the storage error if it fails. A lone one commits
//!   alone. The other jobs (the idempotency store's writes and their purge, the key
//!   registry) run alone.
//!
//! The queue is bounded ([`PoolSettings::queue_size`]) and shared by every kind of write: a
//! write that finds it full fails at once as unavailable (503 with `Retry-After`), so memory
//! never grows with the load.
//!
//! [`PoolSettings::queue_size`]: crate::PoolSettings::queue_size

use std::panic::{catch_unwind, AssertUnwindSafe};

use petstore_application::RepositoryError;
use tokio::sync::mpsc;

use super::checkpointer::WriterGate;
use super::connection::{AnyConnection, Generations};
use super::errors::{self, ScrubbedMessage};
use super::health::StoreHealth;
use super::queue::{self, Queued, Reply};
use super::write_transaction::{in_group_transaction, open_levels, WriteFailure};
use super::writer_jobs::{Commit, Held, Job, JobQueue};
use super::writer_rounds::{Limits, Rounds, Write};
use super::Pool;
use crate::DatabaseUrl;

/// Most pets stored by one transaction (3 bound values each: far below both backends' limits),
/// and most jobs sharing one commit.
const MAX_GROUP: usize = 256;

/// Most other writes run between two groups of creates: a create queued behind a crowd of them
/// waits for this many transactions at most.
const MAX_JOBS_PER_ROUND: usize = 16;

/// The creates the writer stores in groups, one kind per writer: the resource that has them
/// says how a group is stored, the writer when and on which connection.
pub(crate) trait Group: Send + Sized + 'static {
    /// What one create of a group comes to.
    type Stored: Send + 'static;

    /// The failure each create of a group is answered with when storing the group panicked.
    const PANICKED: &'static str;

    /// Stores `group` in one write transaction. `Err` means the whole group failed and nothing
    /// of it is stored; `Ok` holds each create's own outcome, in the group's order.
    fn store(
        conn: &mut AnyConnection,
        group: &[&Self],
    ) -> Result<Vec<Result<Self::Stored, RepositoryError>>, WriteFailure>;
}

/// What the writer's queue carries.
type Request<C> = Write<Pending<C>, Box<dyn Job>>;

/// What each create of a group came to, in the group's order.
type Outcomes<C> = Vec<Result<<C as Group>::Stored, RepositoryError>>;

/// A create waiting for its group's commit.
struct Pending<C: Group> {
    create: C,
    reply: Reply<C::Stored>,
}

/// The sending end of the writer thread's queue. The thread ends once every clone is dropped.
pub(crate) struct WriteQueue<C: Group> {
    sender: queue::Sender<Request<C>>,
}

impl<C: Group> Clone for WriteQueue<C> {
    fn clone(&self) -> Self {
        Self {
            sender: self.sender.clone(),
        }
    }
}

impl<C: Group> std::fmt::Debug for WriteQueue<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteQueue")
            .field("queued", &self.depth().get())
            .finish()
    }
}

impl<C: Group> WriteQueue<C> {
    /// Starts the writer thread, storing through connections of `pool`.
    pub(crate) fn start(
        pool: Pool,
        generations: Generations,
        health: StoreHealth,
        gate: WriterGate,
        url: DatabaseUrl,
        capacity: usize,
    ) -> std::io::Result<Self> {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        let writer = Writer {
            pool,
            generations,
            health,
            gate,
            url,
        };
        let rounds = Rounds::new(
            receiver,
            Limits {
                creates: MAX_GROUP,
                shared: MAX_GROUP,
                jobs: MAX_JOBS_PER_ROUND,
            },
        );
        std::thread::Builder::new()
            .name("petstore-writer".to_owned())
            .spawn(move || writer.run(rounds))?;
        Ok(Self { sender })
    }

    /// How many writes wait in the queue, read without keeping the writer alive.
    pub(crate) fn depth(&self) -> queue::Depth {
        queue::Depth::of(&self.sender)
    }

    /// Queues `create` for the next group and waits for its commit.
    pub(crate) async fn create(&self, create: C) -> Result<C::Stored, RepositoryError> {
        queue::ask(&self.sender, WRITER, |reply| {
            Write::Create(Pending { create, reply })
        })
        .await
    }

    /// The same queue for the writes other than creates, run between the groups, alone or
    /// sharing a commit (`writer_jobs.rs`).
    pub(crate) fn jobs(&self) -> JobQueue {
        let sender = self.sender.clone();
        JobQueue::new(WRITER, move |job, commit| {
            let write = match commit {
                Commit::Own => Write::Job(job),
                Commit::Shared => Write::Shared(job),
            };
            queue::offer(&sender, WRITER, write)
        })
    }
}

/// Who answers the writer's queue, for the errors that name it.
const WRITER: &str = "writer thread";

/// The same failure for each of `count` pets (errors carry boxed sources, so one is made each).
fn all_failed<C: Group>(count: usize, error: impl Fn() -> RepositoryError) -> Outcomes<C> {
    (0..count).map(|_| Err(error())).collect()
}

/// Why a group's transaction stored nothing: each of its callers is answered with an error
/// made from it (errors carry boxed sources, so one is made each).
struct GroupFailure(Box<dyn Fn() -> RepositoryError>);

impl GroupFailure {
    fn error(&self) -> RepositoryError {
        (self.0)()
    }
}

struct Writer {
    pool: Pool,
    generations: Generations,
    health: StoreHealth,
    gate: WriterGate,
    url: DatabaseUrl,
}

impl Writer {
    fn run<C: Group>(self, mut rounds: Rounds<Pending<C>, Box<dyn Job>>) {
        while let Some(round) = rounds.next_round() {
            self.store_group(round.creates);
            self.run_sharing_commit(round.shared);
            for job in round.jobs {
                self.run_job(job);
            }
        }
    }

    /// Stores a group of creates and answers each.
    fn store_group<C: Group>(&self, mut group: Vec<Queued<Pending<C>>>) {
        // A caller that went away (its client hung up) was never told the pet is stored.
        group.retain(|queued| !queued.request.reply.is_closed());
        if group.is_empty() {
            return;
        }
        let span = queue::span_of(&group);
        let _in_span = span.enter();
        let creates: Vec<&C> = group.iter().map(|queued| &queued.request.create).collect();
        // A bug in storing one group must not stop every later create.
        let outcomes =
            catch_unwind(AssertUnwindSafe(|| self.store(&creates))).unwrap_or_else(|_| {
                all_failed::<C>(creates.len(), || {
                    RepositoryError::Unexpected(Box::new(ScrubbedMessage(C::PANICKED.to_owned())))
                })
            });
        drop(creates);
        for (queued, outcome) in group.into_iter().zip(outcomes) {
            // The caller may have gone since; its pet is stored all the same.
            let _ = queued.request.reply.send(outcome);
        }
    }

    /// Runs jobs that share a commit in one transaction, each in its own savepoint, and answers
    /// each after the commit. A lone one runs as any job does, in its own transaction.
    fn run_sharing_commit(&self, mut group: Vec<Queued<Box<dyn Job>>>) {
        group.retain(|queued| !queued.request.is_abandoned());
        if group.len() <= 1 {
            group.into_iter().for_each(|job| self.run_job(job));
            return;
        }
        let span = queue::span_of(&group);
        let _in_span = span.enter();
        let mut waiting: std::collections::VecDeque<_> = group.into();
        let mut held: Vec<Held> = Vec::with_capacity(waiting.len());
        let mut ended = false;
        let committed = self.in_group(|conn| {
            in_group_transaction(conn, |conn| {
                while let Some(queued) = waiting.pop_front() {
                    let (job, span) = queued.into_parts();
                    held.push(span.in_scope(|| job.run_in_group(conn)));
                    // A failure SQLite answers by ending the transaction (a full disk) leaves
                    // nothing for the commit to store: the rest is not run outside it.
                    if open_levels(conn) != Some(1) {
                        ended = true;
                        return Err(diesel::result::Error::RollbackTransaction);
                    }
                }
                Ok(())
            })
        });
        let Err(failure) = committed else {
            held.into_iter().for_each(|held| held.release(Ok(())));
            return;
        };
        // The job that ended the transaction reported its fault; the others share it.
        let fault = self.health.fault().filter(|_| ended);
        let error = || match fault {
            Some(fault) => RepositoryError::Unavailable(Box::new(fault)),
            None => failure.error(),
        };
        for held in held {
            held.release(Err(error()));
        }
        for queued in waiting {
            queued.request.run(Err(error()));
        }
    }

    /// Runs one other write on a connection of the pool, holding the writer's turn (the
    /// checkpointer's restart and the probe take it too), in its caller's span.
    fn run_job(&self, queued: Queued<Box<dyn Job>>) {
        let (job, span) = queued.into_parts();
        if job.is_abandoned() {
            return;
        }
        let _in_span = span.enter();
        match super::metrics::checkout(&self.pool, Some(&self.health), "write") {
            Ok(mut conn) => {
                let _turn = self.gate.enter();
                job.run(Ok(&mut conn));
            }
            Err(error) => job.run(Err(errors::from_checkout(&error, &self.url))),
        }
    }

    /// Stores one group; every pet of it gets an outcome.
    fn store<C: Group>(&self, group: &[&C]) -> Outcomes<C> {
        if group.is_empty() {
            return Vec::new();
        }
        let started = std::time::Instant::now();
        match self.in_group(|conn| C::store(conn, group)) {
            Ok(outcomes) => {
                super::metrics::group_committed(group.len(), started);
                outcomes
            }
            Err(failure) => all_failed::<C>(group.len(), || failure.error()),
        }
    }

    /// Runs `write`, one transaction for a group of requests, on a connection of the pool while
    /// holding the writer's turn (the checkpointer's restart and the probe take it too); a
    /// connection found lost before anything was sent is tried once more on a new one. A
    /// failure is reported to the store's health and becomes what each request is answered.
    fn in_group<T>(
        &self,
        mut write: impl FnMut(&mut AnyConnection) -> Result<T, WriteFailure>,
    ) -> Result<T, GroupFailure> {
        let mut retried = false;
        loop {
            let mut conn = match super::metrics::checkout(&self.pool, Some(&self.health), "write") {
                Ok(conn) => conn,
                Err(error) => {
                    let url = self.url.clone();
                    return Err(GroupFailure(Box::new(move || {
                        errors::from_checkout(&error, &url)
                    })));
                }
            };
            let outcome = {
                let _turn = self.gate.enter();
                write(&mut conn)
            };
            let failure = match outcome {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let lost = errors::is_connection_lost(failure.error());
            if lost {
                self.generations.retire_all();
            }
            // A connection found closed before anything was sent (the server restarted since
            // it was last used) is worth one more try on a new one.
            if lost && !retried && matches!(failure, WriteFailure::NotStarted(_)) {
                retried = true;
                continue;
            }
            let error = failure.into_error();
            self.health.report_error(&error);
            if let Some(fault) = errors::fault_of(&error) {
                return Err(GroupFailure(Box::new(move || {
                    RepositoryError::Unavailable(Box::new(fault))
                })));
            }
            let message = self.url.scrub(&error.to_string());
            let unavailable = errors::is_unavailable(&error);
            return Err(GroupFailure(Box::new(move || {
                let detail = Box::new(ScrubbedMessage(message.clone()));
                if unavailable {
                    RepositoryError::Unavailable(detail)
                } else {
                    RepositoryError::Unexpected(detail)
                }
            })));
        }
    }
}
