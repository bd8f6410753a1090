//! `DieselPetRepository`: the pets' repository port on a [`SqlStore`](crate::SqlStore)'s pools
//! and threads. Each query is written once for both backends.
//!
//! - Creates go to the group commit's writer thread (`engine/group_commit.rs`).
//! - A change or removal is one write transaction like an order's (`engine/writes.rs`: the
//!   writer thread on SQLite, where the changes and orders queued together share one commit,
//!   each in a savepoint of its own; a pooled connection on PostgreSQL), on the pet read locked
//!   (`locked.rs`).
//! - Reads on SQLite are answered on the calling async worker by an idle read-only connection
//!   when one is free and the answer is small (a point read, a page of at most
//!   [`INLINE_MAX_ROWS`]): SQLite answers those from memory in microseconds, less than the hop
//!   to a blocking thread would cost. Such a connection never waits (busy timeout zero): a busy
//!   database, a bigger page or no idle connection sends the read to tokio's blocking pool,
//!   which waits for a connection up to `checkout_timeout` and then answers `Unavailable`. The
//!   idle connections keep their snapshot between reads (`engine/read_snapshot.rs`).
//! - Reads on PostgreSQL cost a network round trip, so they are answered in groups by reader
//!   threads (`group_read.rs`). A checkout costs no round trip of its own: a connection found
//!   closed (a server restart) retires every connection opened before it, and the read is tried
//!   once more on a new one.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use petstore_application::{
    PetRepository, PetWork, PetWrite, PetWriteError, RecordPlan, RepositoryError, Written,
};
use petstore_domain::{EventType, NamePosition, NewPet, OrderId, Pet, PetId, PetSearch, PetStatus};

use super::batch_insert::PetCreate;
use super::group_read::{load_page, Page, ReadQueue};
use super::locked;
use super::pet_row::PetRow;
use super::search::{name_page, search_page};
use crate::sql::engine::checkpointer::Checkpointer;
use crate::sql::engine::connection::{on_connection, AnyConnection, Generations};
use crate::sql::engine::errors;
use crate::sql::engine::group_commit::WriteQueue;
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::outbox;
use crate::sql::engine::probe::Probe;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::read_snapshot::Sweeper;
use crate::sql::engine::write_transaction::no_turn;
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::sql::idempotency::recorded_write::{write_recorded, Stop};
use crate::sql::schema::pets;
use crate::{DatabaseUrl, PoolSettings};

/// Largest page a SQLite read answers on the async worker: the default page of 20 pets and the
/// one more row that tells whether another page follows. Bigger pages (up to 101 rows) take
/// several times as long and go to the blocking pool.
pub(crate) const INLINE_MAX_ROWS: usize = 21;

/// Pets in a SQLite file or a PostgreSQL database. Cheap to clone: clones share the pools, the
/// writer thread and (SQLite) the checkpointer, which stop when the last clone is dropped.
#[derive(Clone)]
pub struct DieselPetRepository {
    pub(crate) pool: Pool,
    pub(crate) reads: Reads,
    pub(crate) generations: Generations,
    pub(crate) creates: WriteQueue<PetCreate>,
    /// Changes and removals: write transactions of their own.
    pub(crate) writes: Writes,
    pub(crate) health: StoreHealth,
    pub(crate) _checkpointer: Option<Arc<Checkpointer>>,
    pub(crate) _probe: Arc<Probe>,
    pub(crate) url: DatabaseUrl,
    pub(crate) settings: PoolSettings,
}

/// How reads reach the database.
#[derive(Clone)]
pub(crate) enum Reads {
    /// SQLite: read-only connections for reads answered on the caller's thread, each keeping
    /// its snapshot open between reads.
    Inline(Arc<Sweeper>),
    /// PostgreSQL: the reader threads' queue.
    Grouped(ReadQueue),
}

impl fmt::Debug for DieselPetRepository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DieselPetRepository")
            .field("url", &self.url)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl DieselPetRepository {
    /// Runs the read `query`: on the caller's thread when `small` and an idle SQLite reader is
    /// free and not kept waiting, otherwise on the blocking pool.
    async fn read<T, Q>(&self, small: bool, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        let inline = match &self.reads {
            Reads::Inline(readers) if small => readers.try_read(&query),
            _ => None,
        };
        if let Some(outcome) = inline {
            match outcome {
                // Busy: the blocking path may wait for it.
                Err(error) if errors::is_unavailable(&error) => {}
                outcome => return outcome.map_err(errors::from_query),
            }
        }
        read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            query,
        )
        .await
    }
}

#[async_trait]
impl PetRepository for DieselPetRepository {
    async fn create(
        &self,
        new_pet: NewPet,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, RepositoryError> {
        self.health.admit_write()?;
        self.creates.create(PetCreate { new_pet, plan }).await
    }

    async fn change(
        &self,
        id: PetId,
        work: PetWork,
        plan: Option<RecordPlan<Pet>>,
    ) -> Result<Written<Pet>, PetWriteError> {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run_shared(move |conn| change_on(conn, id, &work, plan.as_ref(), &health))
            .await?
    }

    async fn list(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        self.health.admit_read()?;
        if !search.is_empty() {
            let (status, search) = (status.map(PetStatus::as_str), search.clone());
            let after = after.map_or(i64::MIN, PetId::get);
            let limit = i64::try_from(max).unwrap_or(i64::MAX);
            let rows = self
                .read(max <= INLINE_MAX_ROWS, move |conn| {
                    search_page(conn, status, &search, after, limit)
                })
                .await?;
            return rows.into_iter().map(PetRow::into_pet).collect();
        }
        let page = Page {
            status: status.map(PetStatus::as_str),
            after: after.map_or(i64::MIN, PetId::get),
            limit: i64::try_from(max).unwrap_or(i64::MAX),
        };
        let rows = match &self.reads {
            Reads::Grouped(queue) => queue.page(page).await?,
            Reads::Inline(_) => {
                self.read(max <= INLINE_MAX_ROWS, move |conn| load_page(conn, page))
                    .await?
            }
        };
        rows.into_iter().map(PetRow::into_pet).collect()
    }

    async fn list_by_name(
        &self,
        status: Option<PetStatus>,
        search: &PetSearch,
        after: Option<NamePosition>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        self.health.admit_read()?;
        let (status, search) = (status.map(PetStatus::as_str), search.clone());
        let after = after.map(|position| (position.folded_name, position.id.get()));
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = self
            .read(max <= INLINE_MAX_ROWS, move |conn| {
                name_page(conn, status, &search, after.clone(), limit)
            })
            .await?;
        rows.into_iter().map(PetRow::into_pet).collect()
    }

    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        self.health.admit_read()?;
        let row = match &self.reads {
            Reads::Grouped(queue) => queue.find(id.get()).await?,
            Reads::Inline(_) => {
                self.read(true, move |conn| {
                    let query = pets::table
                        .find(id.get())
                        .filter(pets::removed_at.is_null())
                        .select(PetRow::COLUMNS);
                    on_connection!(conn, |c| query.get_result::<PetRow>(c)).optional()
                })
                .await?
            }
        };
        row.map(PetRow::into_pet).transpose()
    }

    async fn find_many(&self, ids: &[PetId]) -> Result<Vec<Pet>, RepositoryError> {
        self.health.admit_read()?;
        let ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
        let small = ids.len() < INLINE_MAX_ROWS;
        let rows = self
            .read(small, move |conn| {
                pets::table
                    .filter(pets::id.eq_any(&ids))
                    .filter(pets::removed_at.is_null())
                    .order(pets::id)
                    .select(PetRow::COLUMNS)
                    .load::<PetRow>(conn)
            })
            .await?;
        rows.into_iter().map(PetRow::into_pet).collect()
    }

    /// What the probe knows (`engine/probe.rs`), without a round trip: a flood of readiness checks
    /// costs the database nothing.
    async fn ping(&self) -> Result<(), RepositoryError> {
        self.health.admit_write()
    }
}

/// [`PetRepository::change`] on `conn`: the live pet locked, the order holding it, `work`'s
/// decision written, and the record of a keyed change with it.
fn change_on(
    conn: &mut AnyConnection,
    id: PetId,
    work: &PetWork,
    plan: Option<&RecordPlan<Pet>>,
    health: &StoreHealth,
) -> Result<Written<Pet>, PetWriteError> {
    write_recorded(conn, no_turn, plan, health, |conn| {
        let failed = |error: RepositoryError| Stop::Failed(PetWriteError::Repository(error));
        let pet = locked::live_pet_for_update(conn, id.get())?
            .ok_or(Stop::Refused(PetWriteError::NotFound(id)))?
            .into_pet()
            .map_err(failed)?;
        let holding = locked::holding_order(conn, id.get())?.map(OrderId::new);
        let before = locked::TagRowsOf::pet(&pet);
        let (pet, event_type) = match work(pet, holding).map_err(Stop::Refused)? {
            PetWrite::Unchanged(pet) => return Ok(pet),
            PetWrite::Changed(pet) => {
                locked::save(conn, &before, &pet)?;
                (pet, EventType::PetUpdated)
            }
            PetWrite::Removed(pet, at) => {
                locked::remove(conn, &pet, at)?;
                (pet, EventType::PetRemoved)
            }
        };
        outbox::append(conn, vec![PetRow::event(event_type, &pet)?])?;
        Ok(pet)
    })
}
