//! The webhook ports on SQL, written once for both backends: endpoints and their deliveries as
//! the API manages them (`endpoints.rs`, `deliveries.rs`), and the queue the delivery worker
//! takes its work from (`queue.rs`: the fan-out of the feed, the purge; `claims.rs`: leasing
//! due deliveries and settling an attempt under its lease). `rows.rs` is the tables and rows.
//!
//! Reads go through the store's pool. Every write is one write transaction: on SQLite a job of
//! the writer thread, in turn with every other write (one writer, so claims never overlap and
//! need no row locks); on PostgreSQL on a pooled connection, where endpoint writes take an
//! advisory lock of their own (the most endpoints a store keeps is checked and kept in one
//! turn) and claims skip the rows another instance holds (`FOR UPDATE SKIP LOCKED`).

mod claims;
mod deliveries;
mod endpoint_lookup;
mod endpoints;
mod pending;
mod queue;
mod rows;

use diesel::QueryResult;
use petstore_application::RecordPlan;
use petstore_application::{RepositoryError, WebhookError, Written};

pub use endpoints::DieselWebhookRepository;
pub use queue::DieselDeliveryQueue;

use crate::sql::engine::connection::{AnyConnection, Generations};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::write_transaction::{in_write_transaction, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::sql::idempotency::recorded_write::{write_recorded, Stop};
use crate::DatabaseUrl;

/// What the webhook repositories share of the store: its pool, its writes and its health.
#[derive(Clone)]
pub(crate) struct WebhookStore {
    pool: Pool,
    writes: Writes,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
}

impl std::fmt::Debug for WebhookStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl WebhookStore {
    pub(crate) fn new(
        pool: Pool,
        writes: Writes,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
    ) -> Self {
        Self {
            pool,
            writes,
            generations,
            health,
            url,
        }
    }

    async fn read<T, Q>(&self, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_read()?;
        read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            query,
        )
        .await
    }

    /// Runs `work` as one write transaction after `take_turn`, with the record `plan` makes of
    /// its result.
    async fn write_recorded<T, W>(
        &self,
        take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
        plan: Option<RecordPlan<T>>,
        work: W,
    ) -> Result<Written<T>, WebhookError>
    where
        T: Send + 'static,
        W: Fn(&mut AnyConnection) -> Result<T, Stop<WebhookError>> + Send + 'static,
    {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run_shared(move |conn| write_recorded(conn, take_turn, plan.as_ref(), &health, work))
            .await?
    }

    /// [`write_recorded`](Self::write_recorded) without a record: the result of `work`.
    async fn write_refusable<T, W>(
        &self,
        take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
        work: W,
    ) -> Result<T, WebhookError>
    where
        T: Send + 'static,
        W: Fn(&mut AnyConnection) -> Result<T, Stop<WebhookError>> + Send + 'static,
    {
        match self.write_recorded(take_turn, None, work).await? {
            Written::Done(result, _) => Ok(result),
            Written::Earlier(_) => Err(WebhookError::Repository(RepositoryError::Unexpected(
                "storage answered a write without a key from an idempotency record".into(),
            ))),
        }
    }

    /// Runs `work` as one write transaction that no rule of a use case refuses.
    async fn write<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run_shared(move |conn| {
                in_write_transaction(conn, no_turn, &work)
                    .map_err(|failure| failure.into_repository_error(&health))
            })
            .await?
    }
}

/// `sql`, written with `?` placeholders, as `conn`'s dialect numbers them (`$1`, `$2`, ... on
/// PostgreSQL). The statements here have no `?` inside a literal.
fn in_dialect(conn: &AnyConnection, sql: &str) -> String {
    match conn {
        AnyConnection::Sqlite(_) => sql.to_owned(),
        AnyConnection::Postgresql(_) => {
            let mut numbered = String::with_capacity(sql.len() + 8);
            let mut next = 0;
            for c in sql.chars() {
                if c == '?' {
                    next += 1;
                    numbered.push('$');
                    numbered.push_str(&next.to_string());
                } else {
                    numbered.push(c);
                }
            }
            numbered
        }
    }
}
