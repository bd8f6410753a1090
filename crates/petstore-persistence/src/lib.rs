//! Storage adapters for the ports of pets, orders, categories, the event feed, keys,
//! idempotency records and webhooks (their endpoints and the delivery queue).
//!
//! - [`SqlStore`]: one diesel implementation serving SQLite files and PostgreSQL servers through
//!   an r2d2 pool, with migrations embedded from the top-level `migrations/`; its repositories
//!   ([`DieselPetRepository`], [`DieselOrderRepository`], [`DieselKeyRegistry`],
//!   [`DieselIdempotencyStore`]) share the pool and its threads.
//! - [`InMemoryPetRepository`] and [`InMemoryKeyRegistry`]: kept in the process, for `memory:`
//!   and tests.
//!
//! The composition root needs two blocking calls: [`open`] (connect, migrate, hand back the
//! ports) and [`migrate`]. Both fail with a [`StorageError`] worded for an operator's terminal;
//! [`StorageError::is_transient`] tells a start-up loop whether retrying can help.

mod error;
mod event_stamp;
mod libpq_uri;
mod memory;
mod postgres_url;
mod settings;
mod sql;
mod url;

use std::sync::Arc;

use petstore_application::{
    CategoryRepository, DeliveryQueue, EventFeed, IdempotencyStore, InventoryRepository,
    KeyRegistry, OrderRepository, PetRepository, WebhookRepository,
};

pub use error::StorageError;
pub use memory::{
    InMemoryCategoryRepository, InMemoryEventFeed, InMemoryIdempotencyStore,
    InMemoryInventoryRepository, InMemoryKeyRegistry, InMemoryOrderRepository,
    InMemoryPetRepository, InMemoryWebhooks,
};
pub use postgres_url::PostgresUrl;
pub use settings::PoolSettings;
pub use sql::{
    backup_sqlite, export, import, restore_sqlite, BackupError, BackupReport, BackupStamp,
    ExportError, ExportHeader, ExportSummary, ImportError, ImportOptions, ImportSummary,
    RestoreChecks, RestoreError, RestoreReport,
};
pub use sql::{
    describe_metrics, DieselCategoryRepository, DieselDeliveryQueue, DieselEventFeed,
    DieselIdempotencyStore, DieselInventoryRepository, DieselKeyRegistry, DieselOrderRepository,
    DieselPetRepository, DieselWebhookRepository, OrderIds, PoolMetrics, SqlStore,
};
pub use url::DatabaseUrl;

/// The ports on one store: its pets, orders, key registry and idempotency records.
#[derive(Clone)]
pub struct Storage {
    pub pets: Arc<dyn PetRepository>,
    pub orders: Arc<dyn OrderRepository>,
    pub categories: Arc<dyn CategoryRepository>,
    /// The feed of every change, written by the repositories above in their transactions.
    pub events: Arc<dyn EventFeed>,
    /// The live pets counted by status.
    pub inventory: Arc<dyn InventoryRepository>,
    pub keys: Arc<dyn KeyRegistry>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Webhook endpoints and their deliveries, as the API manages them.
    pub webhooks: Arc<dyn WebhookRepository>,
    /// The webhook deliveries the delivery worker takes its work from.
    pub deliveries: Arc<dyn DeliveryQueue>,
    /// The connection pool's gauges (none for `memory:`).
    pub pool_metrics: Option<PoolMetrics>,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage").finish_non_exhaustive()
    }
}

/// Opens the storage behind `url`: an empty in-memory store for `memory:`, otherwise a pool on
/// the database with every pending migration applied. Blocking; call it off the async workers.
pub fn open(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Storage, StorageError> {
    if let DatabaseUrl::Memory = url {
        let pets = InMemoryPetRepository::new();
        let webhooks = InMemoryWebhooks::new(&pets);
        return Ok(Storage {
            orders: Arc::new(InMemoryOrderRepository::new(&pets)),
            categories: Arc::new(InMemoryCategoryRepository::new(&pets)),
            events: Arc::new(InMemoryEventFeed::new(&pets)),
            inventory: Arc::new(InMemoryInventoryRepository::new(&pets)),
            idempotency: Arc::new(InMemoryIdempotencyStore::new(&pets)),
            pets: Arc::new(pets),
            keys: Arc::new(InMemoryKeyRegistry::new()),
            deliveries: Arc::new(webhooks.clone()),
            webhooks: Arc::new(webhooks),
            pool_metrics: None,
        });
    }
    let store = SqlStore::open(url, settings)?;
    Ok(Storage {
        pets: Arc::new(store.pets()),
        orders: Arc::new(store.orders()),
        categories: Arc::new(store.categories()),
        events: Arc::new(store.events()),
        inventory: Arc::new(store.inventory()),
        keys: Arc::new(store.keys()),
        idempotency: Arc::new(store.idempotency()),
        webhooks: Arc::new(store.webhooks()),
        deliveries: Arc::new(store.deliveries()),
        pool_metrics: Some(store.pool_metrics()),
    })
}

/// Applies the pending migrations of the database behind `url` and returns their versions, in
/// the order applied (empty when it was up to date, and always for `memory:`). Blocking.
pub fn migrate(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Vec<String>, StorageError> {
    if let DatabaseUrl::Memory = url {
        return Ok(Vec::new());
    }
    sql::run_migrations(url, settings)
}
