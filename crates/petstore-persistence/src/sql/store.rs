//! The SQL store: one database behind one connection pool, the threads that serve it (the
//! writer, which stores creates in groups and on SQLite runs every other write too, PostgreSQL's
//! readers, SQLite's checkpointer, the health probe), its migrations, and the repositories built
//! on it, which share all of that. `lib.rs`'s `open` asks for [`SqlStore::open`] and hands out
//! its repositories as the ports.

use std::path::Path;

use diesel::r2d2::R2D2Connection;
use petstore_application::StorageFault;

use super::categories::DieselCategoryRepository;
use super::engine::checkpointer::{Checkpointer, WriterGate};
use super::engine::connection::{Generations, SqliteRole};
use super::engine::group_commit::WriteQueue;
use super::engine::health::StoreHealth;
use super::engine::pool::{build_pool, manager_for};
use super::engine::probe::{self, Probe};
use super::engine::read_snapshot::Sweeper;
use super::engine::writes::Writes;
use super::engine::Pool;
use super::engine::{errors, migrations};
use super::events::DieselEventFeed;
use super::idempotency::store::DieselIdempotencyStore;
use super::inventory::repository::DieselInventoryRepository;
use super::keys::registry::DieselKeyRegistry;
use super::orders::repository::DieselOrderRepository;
use super::pets::batch_insert::PetCreate;
use super::pets::group_read::ReadQueue;
use super::pets::name_backfill::fill_name_folded;
use super::pets::repository::{DieselPetRepository, Reads};
use super::webhooks::{DieselDeliveryQueue, DieselWebhookRepository, WebhookStore};
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// One SQL database and everything that serves it: the pool, the store's health and the writer
/// thread, which it hands to each resource's repository. Cheap to clone; the threads stop when
/// the store and every repository built from it are dropped.
#[derive(Clone)]
pub struct SqlStore {
    pool: Pool,
    generations: Generations,
    health: StoreHealth,
    writer: WriteQueue<PetCreate>,
    url: DatabaseUrl,
    settings: PoolSettings,
    /// The pets' repository, with the reads only pets have (SQLite's inline readers,
    /// PostgreSQL's grouped reads); it keeps the checkpointer and the probe running.
    pets: DieselPetRepository,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore")
            .field("url", &self.url)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SqlStore {
    /// [`build`](Self::build), then refuse a database that cannot be written and apply every
    /// pending migration (logged): the store a server serves from. Blocking.
    pub fn open(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Self, StorageError> {
        let store = Self::build(url, settings)?;
        store.check_writable()?;
        let applied = store.run_migrations()?;
        if !applied.is_empty() {
            tracing::info!(database = %url, versions = ?applied, "applied migrations");
        }
        if let (DatabaseUrl::Sqlite(path), Some(checkpointer)) = (url, &store.pets._checkpointer) {
            // Only now: a connection held while the new file turns to WAL would stop it.
            checkpointer.hold_presence(path).map_err(|reason| {
                StorageError::other(format!("cannot open the SQLite database {url}: {reason}"))
            })?;
        }
        Ok(store)
    }

    /// The store on `url` (SQLite or PostgreSQL), with its writer thread (and, for SQLite, its
    /// checkpointer) started. Opens no connection yet, so it can be built while the database is
    /// down. A SQLite file's directory must exist. [`open`](Self::open) is what a server wants.
    pub fn build(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Self, StorageError> {
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
                let snapshots = std::sync::Arc::new(
                    Sweeper::start(build_pool(manager, url, readers, readers, settings, None))
                        .map_err(thread_failed)?,
                );
                (
                    Reads::Inline(std::sync::Arc::clone(&snapshots)),
                    Some(std::sync::Arc::new(
                        Checkpointer::start(checkpoints, gate.clone(), health.clone(), snapshots)
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
        let writer = WriteQueue::start(
            pool.clone(),
            generations.clone(),
            health.clone(),
            gate,
            url.clone(),
            settings.queue_size,
        )
        .map_err(thread_failed)?;
        let pets = DieselPetRepository {
            pool: pool.clone(),
            reads,
            generations: generations.clone(),
            creates: writer.clone(),
            writes: Writes::new(url, &writer.jobs(), &pool, &health),
            health: health.clone(),
            _checkpointer: checkpointer,
            _probe: std::sync::Arc::new(probe),
            url: url.clone(),
            settings: *settings,
        };
        Ok(Self {
            pool,
            generations,
            health,
            writer,
            url: url.clone(),
            settings: *settings,
            pets,
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
        probe::write_test(&mut conn).map_err(|error| {
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
        super::PoolMetrics::new(self.pool.clone(), self.writer.depth())
    }

    /// The orders, read on this store's pool and written like its other writes.
    pub fn orders(&self) -> DieselOrderRepository {
        DieselOrderRepository::new(
            self.pool.clone(),
            self.writes(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The categories, read on this store's pool and written like its other writes.
    pub fn categories(&self) -> DieselCategoryRepository {
        DieselCategoryRepository::new(
            self.pool.clone(),
            self.writes(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The event feed, read on this store's pool and purged through its writes.
    pub fn events(&self) -> DieselEventFeed {
        DieselEventFeed::new(
            self.pool.clone(),
            self.writes(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The live pets counted by status, read on this store's pool.
    pub fn inventory(&self) -> DieselInventoryRepository {
        DieselInventoryRepository::new(
            self.pool.clone(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The idempotency records of retried writes, read on this store's pool and written like
    /// its other writes.
    pub fn idempotency(&self) -> DieselIdempotencyStore {
        DieselIdempotencyStore::new(
            self.pool.clone(),
            self.writes(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The key registry, read on this store's pool and written like its other writes.
    pub fn keys(&self) -> DieselKeyRegistry {
        DieselKeyRegistry::new(
            self.pool.clone(),
            self.writes(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// The webhook endpoints and their deliveries, read on this store's pool and written like
    /// its other writes.
    pub fn webhooks(&self) -> DieselWebhookRepository {
        DieselWebhookRepository::new(self.webhook_store())
    }

    /// The queue of webhook deliveries the delivery worker takes its work from.
    pub fn deliveries(&self) -> DieselDeliveryQueue {
        DieselDeliveryQueue::new(self.webhook_store())
    }

    fn webhook_store(&self) -> WebhookStore {
        WebhookStore::new(
            self.pool.clone(),
            self.writes(),
            self.generations.clone(),
            self.health.clone(),
            self.url.clone(),
        )
    }

    /// How the writes other than creates reach the database: on SQLite through the writer
    /// thread, in turn with the creates; on PostgreSQL on pooled connections (`writes.rs`).
    fn writes(&self) -> Writes {
        Writes::new(&self.url, &self.writer.jobs(), &self.pool, &self.health)
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

    /// The pets, on this store.
    pub fn pets(&self) -> DieselPetRepository {
        self.pets.clone()
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
    let applied = migrations::run_pending(&mut conn).map_err(|error| {
        let connection_lost = conn.ping().is_err();
        errors::migration_failed(url, &error, connection_lost)
    })?;
    let folded = fill_name_folded(&mut conn).map_err(|error| errors::query_failed(url, &error))?;
    if folded > 0 {
        tracing::info!(database = %url, pets = folded, "folded the names of pets written before the name search");
    }
    Ok(applied)
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
