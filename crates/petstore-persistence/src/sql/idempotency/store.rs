//! `DieselIdempotencyStore`: the idempotency port on a [`SqlStore`](crate::SqlStore). Lookups
//! are reads on its pool; storing a refusal and the purge are small write transactions, run
//! like the store's other writes (`engine/writes.rs`: on SQLite by the writer thread).

use async_trait::async_trait;
use diesel::QueryResult;
use petstore_application::{IdempotencyRecord, IdempotencyStore, RepositoryError};
use petstore_domain::{IdempotencyKey, KeyId};

use super::record_sweep::RecordSweep;
use super::records::{self, RecordRow};
use crate::sql::engine::connection::{AnyConnection, Generations};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::write_transaction::{in_write_transaction, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::DatabaseUrl;

/// Idempotency records in the database behind a pool.
#[derive(Clone)]
pub struct DieselIdempotencyStore {
    pool: Pool,
    writes: Writes,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
    sweep: RecordSweep,
}

impl std::fmt::Debug for DieselIdempotencyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselIdempotencyStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl DieselIdempotencyStore {
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
            sweep: RecordSweep::default(),
        }
    }

    /// Runs `work` as one write transaction.
    async fn write<T, W>(&self, work: W) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        W: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run(move |conn| {
                in_write_transaction(conn, no_turn, work)
                    .map_err(|failure| failure.into_repository_error(&health))
            })
            .await?
    }
}

#[async_trait]
impl IdempotencyStore for DieselIdempotencyStore {
    async fn find(
        &self,
        owner: &KeyId,
        key: &IdempotencyKey,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError> {
        self.health.admit_read()?;
        let (owner, key) = (owner.clone(), key.clone());
        let row = read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            move |conn| records::find(conn, &owner, &key),
        )
        .await?;
        row.map(RecordRow::into_record).transpose()
    }

    async fn insert(
        &self,
        record: IdempotencyRecord,
        expired_before: i64,
    ) -> Result<Option<IdempotencyRecord>, RepositoryError> {
        let earlier = self
            .write(move |conn| {
                if records::insert_if_absent(conn, &record, expired_before)? {
                    Ok(None)
                } else {
                    records::find(conn, &record.owner, &record.key)
                }
            })
            .await?;
        earlier.map(RecordRow::into_record).transpose()
    }

    async fn purge(&self, cutoff: i64, max: usize) -> Result<usize, RepositoryError> {
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let sweep = self.sweep.clone();
        self.write(move |conn| records::purge(conn, &sweep, cutoff, max))
            .await
    }
}
