//! `DieselPetRepository`: the repository port over r2d2 pools of [`AnyConnection`]s. Each query
//! is written once for both backends.
//!
//! - Creates go to the group commit's writer thread (`group_commit.rs`).
//! - Reads on SQLite are answered on the calling async worker by an idle read-only connection
//!   when one is free and the answer is small (a point read, a page of at most
//!   [`INLINE_MAX_ROWS`]): SQLite answers those from memory in microseconds, less than the hop
//!   to a blocking thread would cost. Such a connection never waits (busy timeout zero): a busy
//!   database, a bigger page or no idle connection sends the read to tokio's blocking pool,
//!   which waits for a connection up to `checkout_timeout` and then answers `Unavailable`.
//! - Reads on PostgreSQL cost a network round trip, so they are answered in groups by reader
//!   threads (`group_read.rs`). A checkout costs no round trip of its own: a connection found
//!   closed (a server restart) retires every connection opened before it, and the read is tried
//!   once more on a new one.

use std::fmt;
use std::path::Path;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::r2d2::R2D2Connection;
use petstore_application::{PetRepository, RepositoryError, StorageFault};
use petstore_domain::{NewPet, Pet, PetId, PetStatus};

use super::checkpointer::{Checkpointer, WriterGate};
use super::connection::{AnyConnection, Generations, SqliteRole};
use super::errors;
use super::group_commit::CreateQueue;
use super::group_read::{load_page, Page, ReadQueue};
use super::health::StoreHealth;
use super::migrations;
use super::pet_row::PetRow;
use super::pool::{build_pool, manager_for};
use super::probe::Probe;
use super::read::read_off_the_workers;
use super::schema::pets;
use super::Pool;
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// Largest page a SQLite read answers on the async worker: the default page of 20 pets and the
/// one more row that tells whether another page follows. Bigger pages (up to 101 rows) take
/// several times as long and go to the blocking pool.
pub(crate) const INLINE_MAX_ROWS: usize = 21;

/// Pets in a SQLite file or a PostgreSQL database. Cheap to clone: clones share the pools, the
/// writer thread and (SQLite) the checkpointer, which stop when the last clone is dropped.
#[derive(Clone)]
pub struct DieselPetRepository {
    pool: Pool,
    reads: Reads,
    generations: Generations,
    creates: CreateQueue,
    health: StoreHealth,
    _checkpointer: Option<std::sync::Arc<Checkpointer>>,
    _probe: std::sync::Arc<Probe>,
    url: DatabaseUrl,
    settings: PoolSettings,
}

/// How reads reach the database.
#[derive(Clone)]
enum Reads {
    /// SQLite: read-only connections for reads answered on the caller's thread.
    Inline(Pool),
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
    /// A repository on `url` (SQLite or PostgreSQL), with its writer thread (and, for SQLite, its
    /// checkpointer) started. Opens no connection yet, so it can be built while the database is
    /// down. A SQLite file's directory must exist.
    pub fn new(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Self, StorageError> {
        if settings.max_size == 0 {
            return Err(invalid_settings("the pool size must be at least 1"));
        }
        if settings.checkout_timeout.is_zero() {
            return Err(invalid_settings("the pool timeout must be more than zero"));
        }
        if settings.queue_size == 0 {
            return Err(invalid_settings("the queue size must be at least 1"));
        }
        if let DatabaseUrl::Sqlite(path) = url {
            require_parent_dir(path)?;
        }
        let generations = Generations::default();
        let health = StoreHealth::new(url.clone(), generations.clone());
        let gate = WriterGate::default();
        let pool = build_pool(
            manager_for(url, settings, SqliteRole::ReadWrite, &generations)?,
            url,
            settings.max_size,
            0,
            settings,
            Some(health.clone()),
        );
        let probe = Probe::start(
            manager_for(url, settings, SqliteRole::ReadWrite, &generations)?,
            health.clone(),
            gate.clone(),
        )
        .map_err(thread_failed)?;
        let (reads, checkpointer) = match url {
            DatabaseUrl::Sqlite(_) => {
                // One per async worker is all that can be in use at once; they are opened in
                // the background, so the first reads may take the blocking path.
                let workers = std::thread::available_parallelism().map_or(2, usize::from);
                let readers = u32::try_from(workers)
                    .unwrap_or(u32::MAX)
                    .min(settings.max_size);
                let manager = manager_for(url, settings, SqliteRole::InlineRead, &generations)?;
                let checkpoints = manager_for(url, settings, SqliteRole::Checkpoint, &generations)?;
                (
                    Reads::Inline(build_pool(manager, url, readers, readers, settings, None)),
                    Some(std::sync::Arc::new(
                        Checkpointer::start(checkpoints, gate.clone(), health.clone())
                            .map_err(thread_failed)?,
                    )),
                )
            }
            DatabaseUrl::Postgres(_) | DatabaseUrl::Memory => {
                let queue = ReadQueue::start(
                    pool.clone(),
                    generations.clone(),
                    health.clone(),
                    url.clone(),
                    settings.queue_size,
                )
                .map_err(thread_failed)?;
                (Reads::Grouped(queue), None)
            }
        };
        let creates = CreateQueue::start(
            pool.clone(),
            generations.clone(),
            health.clone(),
            gate,
            url.clone(),
            settings.queue_size,
        )
        .map_err(thread_failed)?;
        Ok(Self {
            pool,
            reads,
            generations,
            creates,
            health,
            _checkpointer: checkpointer,
            _probe: std::sync::Arc::new(probe),
            url: url.clone(),
            settings: *settings,
        })
    }

    /// Applies every pending migration on a connection of its own; returns the versions
    /// applied. Blocking.
    pub fn run_migrations(&self) -> Result<Vec<String>, StorageError> {
        run_migrations(&self.url, &self.settings)
    }

    /// Fails unless a write to the database can be committed: a SQLite file (or directory, or
    /// filesystem) that is read-only, or a full disk, is refused at start-up with a message
    /// that says so, rather than reported ready and then failing every write. Blocking.
    pub fn check_writable(&self) -> Result<(), StorageError> {
        let DatabaseUrl::Sqlite(path) = &self.url else {
            return Ok(());
        };
        // SQLite opens a file it may not write read-only without a word, and on a read-only
        // filesystem fails with only "unable to open database file"; the OS says which.
        match std::fs::OpenOptions::new().append(true).open(path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(StorageError::other(format!(
                    "the SQLite database {} cannot be written: {error}",
                    self.url
                )))
            }
            _ => {}
        }
        let manager = manager_for(
            &self.url,
            &self.settings,
            SqliteRole::ReadWrite,
            &self.generations,
        )?;
        let mut conn = manager
            .establish()
            .map_err(|error| errors::connect_failed(&self.url, &error))?;
        super::probe::write_test(&mut conn).map_err(|error| {
            let reason = self.url.scrub(&error.to_string());
            match errors::fault_of(&error) {
                Some(StorageFault::ReadOnly) => StorageError::other(format!(
                    "the SQLite database {} cannot be written (the file, its directory or its \
                     filesystem is read-only for this process): {reason}",
                    self.url
                )),
                Some(StorageFault::Full) => StorageError::other(format!(
                    "the SQLite database {} cannot be written: the filesystem is full: {reason}",
                    self.url
                )),
                _ => errors::query_failed(&self.url, &error),
            }
        })
    }

    /// Sets the pool gauges on demand.
    pub fn pool_metrics(&self) -> super::PoolMetrics {
        super::PoolMetrics::new(self.pool.clone(), self.creates.depth())
    }

    /// The orders in the same database, on the same pool.
    pub fn order_repository(&self) -> super::DieselOrderRepository {
        super::DieselOrderRepository::new(
            self.pool.clone(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The key registry in the same database, on the same pool.
    pub fn key_registry(&self) -> super::DieselKeyRegistry {
        super::DieselKeyRegistry::new(self.pool.clone(), self.url.clone())
    }

    /// Whether the database answers within the checkout timeout. Blocking; for start-up loops.
    pub fn check(&self) -> Result<(), StorageError> {
        let mut conn = self
            .pool
            .get()
            .map_err(|error| errors::checkout_failed(&self.url, &error))?;
        conn.ping()
            .map_err(|error| errors::query_failed(&self.url, &error))
    }

    /// Runs the read `query`: on the caller's thread when `small` and an idle SQLite reader is
    /// free and not kept waiting, otherwise on the blocking pool.
    async fn read<T, Q>(&self, small: bool, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        let inline = match &self.reads {
            Reads::Inline(readers) if small => readers.try_get(),
            _ => None,
        };
        if let Some(mut conn) = inline {
            match query(&mut conn) {
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
    async fn create(&self, new_pet: NewPet) -> Result<Pet, RepositoryError> {
        self.health.admit_write()?;
        self.creates.create(new_pet).await
    }

    async fn list(
        &self,
        status: Option<PetStatus>,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        self.health.admit_read()?;
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

    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        self.health.admit_read()?;
        let row = match &self.reads {
            Reads::Grouped(queue) => queue.find(id.get()).await?,
            Reads::Inline(_) => {
                self.read(true, move |conn| {
                    pets::table
                        .find(id.get())
                        .select(PetRow::COLUMNS)
                        .get_result::<PetRow>(conn)
                        .optional()
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
                    .order(pets::id)
                    .select(PetRow::COLUMNS)
                    .load::<PetRow>(conn)
            })
            .await?;
        rows.into_iter().map(PetRow::into_pet).collect()
    }

    /// What the probe knows (`probe.rs`), without a round trip: a flood of readiness checks
    /// costs the database nothing.
    async fn ping(&self) -> Result<(), RepositoryError> {
        self.health.admit_write()
    }
}

/// Applies every pending migration to the database behind `url` on a connection of its own
/// (no pool, no storage threads); returns the versions applied. Blocking.
pub fn run_migrations(
    url: &DatabaseUrl,
    settings: &PoolSettings,
) -> Result<Vec<String>, StorageError> {
    if let DatabaseUrl::Sqlite(path) = url {
        require_parent_dir(path)?;
    }
    let manager = manager_for(
        url,
        settings,
        SqliteRole::ReadWrite,
        &Generations::default(),
    )?;
    let mut conn = manager
        .establish()
        .map_err(|error| errors::connect_failed(url, &error))?;
    migrations::run_pending(&mut conn).map_err(|error| {
        let connection_lost = conn.ping().is_err();
        errors::migration_failed(url, &error, connection_lost)
    })
}

/// Refuses a SQLite path whose directory does not exist. It is not created: a mistyped path
/// would else become an empty database somewhere (as root, anywhere) that no one reads.
fn require_parent_dir(path: &Path) -> Result<(), StorageError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(StorageError::MissingDirectory {
                path: dir.to_path_buf(),
            })
        }
        _ => Ok(()),
    }
}

fn thread_failed(error: std::io::Error) -> StorageError {
    StorageError::other(format!("cannot start a storage thread: {error}"))
}

fn invalid_settings(reason: &str) -> StorageError {
    StorageError::InvalidSettings {
        reason: reason.to_owned(),
    }
}
