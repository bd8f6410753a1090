//! Where the writes other than creates (orders, idempotency records and their purge, the key
//! registry) run, by backend:
//!
//! - SQLite has one write lock for the whole file. Each of these writes is a job for the writer
//!   thread (`group_commit.rs`), on its connection, in turn with the groups of creates. On a
//!   connection of its own it would wait for the lock in SQLite's busy handler, which sleeps in
//!   growing steps, while the writer thread takes the lock again the moment it lets go, and
//!   under a steady stream of creates fail with "database is locked" after the busy timeout.
//!   The writes that may share a commit ([`Writes::run_shared`]) queued together share one
//!   transaction of the writer's, each in a savepoint of it: one fsync for all of them.
//! - PostgreSQL locks rows (`FOR UPDATE`, advisory locks), so these writes run side by side, each
//!   on a pooled connection on tokio's blocking pool.

use petstore_application::RepositoryError;

use super::connection::AnyConnection;
use super::errors;
use super::health::StoreHealth;
use super::writer_jobs::JobQueue;
use super::Pool;
use crate::DatabaseUrl;

/// How a repository's writes reach the database. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) enum Writes {
    /// SQLite: the writer thread's queue.
    Writer(JobQueue),
    /// PostgreSQL: connections of the pool, side by side.
    Pooled {
        pool: Pool,
        health: StoreHealth,
        url: DatabaseUrl,
    },
}

impl Writes {
    /// The way to write to `url`'s database: its writer thread's `jobs` for SQLite, `pool` for
    /// PostgreSQL.
    pub(crate) fn new(
        url: &DatabaseUrl,
        jobs: &JobQueue,
        pool: &Pool,
        health: &StoreHealth,
    ) -> Self {
        match url {
            DatabaseUrl::Sqlite(_) => Self::Writer(jobs.clone()),
            DatabaseUrl::Postgres(_) | DatabaseUrl::Memory => Self::Pooled {
                pool: pool.clone(),
                health: health.clone(),
                url: url.clone(),
            },
        }
    }

    /// Runs `work` on a connection to write with, and returns what it returned. `work` runs its
    /// own write transaction on that connection and uses nothing else of the store.
    pub(crate) async fn run<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        match self {
            Self::Writer(jobs) => jobs.run(work).await,
            Self::Pooled { pool, health, url } => {
                let (pool, health, url) = (pool.clone(), health.clone(), url.clone());
                super::blocking::in_callers_span(move || {
                    let mut conn = super::metrics::checkout(&pool, Some(&health), "write")
                        .map_err(|error| errors::from_checkout(&error, &url))?;
                    Ok(work(&mut conn))
                })
                .await
                .map_err(|error| RepositoryError::Unexpected(Box::new(error)))?
            }
        }
    }

    /// [`run`](Self::run) for a `work` whose write transaction may, on SQLite, be a savepoint of
    /// one the writer shares among the writes queued with it: it is answered once that
    /// transaction committed (a failed commit fails it). `work` does its writes in
    /// [`in_write_transaction`](super::write_transaction::in_write_transaction) and nothing
    /// outside it. On PostgreSQL, the same as `run`: each write commits on its own connection.
    pub(crate) async fn run_shared<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        match self {
            Self::Writer(jobs) => jobs.run_shared(work).await,
            Self::Pooled { .. } => self.run(work).await,
        }
    }

    /// [`run`](Self::run) on the caller's thread, which it blocks (not an async worker's).
    pub(crate) fn run_blocking<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: FnOnce(&mut AnyConnection) -> T + Send + 'static,
    {
        match self {
            Self::Writer(jobs) => jobs.run_blocking(work),
            Self::Pooled { pool, health, url } => {
                let mut conn = super::metrics::checkout(pool, Some(health), "write")
                    .map_err(|error| errors::from_checkout(&error, url))?;
                Ok(work(&mut conn))
            }
        }
    }
}
