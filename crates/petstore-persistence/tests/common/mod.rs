//! Shared by the test binaries of this crate: a repository per backend together with whatever
//! keeps its storage alive, and a short way to build pets.
#![allow(dead_code, reason = "each test binary uses its own subset")]

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use petstore_application::{
    CategoryRepository, DeliveryQueue, EventFeed, IdempotencyStore, InventoryRepository,
    KeyRegistry, OrderRepository, PetRepository, WebhookRepository, Written,
};
use petstore_domain::{CategoryId, NewPet, PetName, PetStatus};
use petstore_persistence::{DatabaseUrl, PoolMetrics, PoolSettings, Storage};
use petstore_test_database::{eventually, TestDatabase, TestSqliteFile};

/// A repository under test. The storage behind it (temporary file, test database) is removed
/// when the fixture is dropped.
pub struct Fixture {
    name: &'static str,
    url: String,
    repo: Arc<dyn PetRepository>,
    keys: Arc<dyn KeyRegistry>,
    orders: Arc<dyn OrderRepository>,
    categories: Arc<dyn CategoryRepository>,
    inventory: Arc<dyn InventoryRepository>,
    idempotency: Arc<dyn IdempotencyStore>,
    events: Arc<dyn EventFeed>,
    webhooks: Arc<dyn WebhookRepository>,
    deliveries: Arc<dyn DeliveryQueue>,
    _storage: Box<dyn Any + Send>,
}

impl Fixture {
    pub fn repo(&self) -> &dyn PetRepository {
        self.repo.as_ref()
    }

    pub fn repo_arc(&self) -> Arc<dyn PetRepository> {
        Arc::clone(&self.repo)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The store's URL, for a second instance on the same store.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The key registry in the same store.
    pub fn keys(&self) -> &dyn KeyRegistry {
        self.keys.as_ref()
    }

    pub fn keys_arc(&self) -> Arc<dyn KeyRegistry> {
        Arc::clone(&self.keys)
    }

    /// The idempotency records of the same store.
    pub fn idempotency(&self) -> &dyn IdempotencyStore {
        self.idempotency.as_ref()
    }

    /// The categories of the same store.
    pub fn categories_arc(&self) -> Arc<dyn CategoryRepository> {
        Arc::clone(&self.categories)
    }

    /// The pets of the same store, counted by status.
    pub fn inventory(&self) -> &dyn InventoryRepository {
        self.inventory.as_ref()
    }

    /// The event feed of the same store.
    pub fn events(&self) -> &dyn EventFeed {
        self.events.as_ref()
    }

    /// The orders of the same store.
    pub fn orders_arc(&self) -> Arc<dyn OrderRepository> {
        Arc::clone(&self.orders)
    }

    /// The webhook endpoints and deliveries of the same store.
    pub fn webhooks_arc(&self) -> Arc<dyn WebhookRepository> {
        Arc::clone(&self.webhooks)
    }

    /// The webhook delivery queue of the same store.
    pub fn deliveries_arc(&self) -> Arc<dyn DeliveryQueue> {
        Arc::clone(&self.deliveries)
    }
}

/// The fixture of the backend called `name`, for `petstore_test_database::on_backends!`.
pub async fn fixture(name: &str) -> Fixture {
    match name {
        "memory" => memory(),
        "sqlite" => sqlite(),
        "postgres" => postgres(),
        other => panic!("unknown backend {other}"),
    }
}

pub fn memory() -> Fixture {
    Fixture::new("memory", "memory:", Box::new(()))
}

pub fn sqlite() -> Fixture {
    let file = TestSqliteFile::new();
    Fixture::new("sqlite", &file.url(), Box::new(file))
}

pub fn postgres() -> Fixture {
    let database = TestDatabase::migrated(|url| {
        petstore_persistence::migrate(&parse(url), &PoolSettings::default())
            .unwrap_or_else(|err| panic!("cannot migrate the template {url}: {err}"));
    });
    let url = database.url().to_owned();
    Fixture::new("postgres", &url, Box::new(database))
}

/// The versions of every migration under `migrations/`, oldest first: what a fresh database
/// gets applied. Read from the folder names (`2026-11-22-000000_create_pets` is version
/// `20261122000000`), so a new migration needs no edit here; both dialects must list the same.
pub fn migration_versions() -> Vec<String> {
    let versions = |dialect: &str| {
        let dir = format!("{}/../../migrations/{dialect}", env!("CARGO_MANIFEST_DIR"));
        let mut versions: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{dir}: {error}"))
            .map(|entry| {
                let name = entry.expect("a directory entry").file_name();
                let name = name.to_string_lossy();
                let (date, _) = name.split_once('_').expect("`<version>_<name>`");
                date.replace('-', "")
            })
            .collect();
        versions.sort();
        versions
    };
    let sqlite = versions("sqlite");
    assert_eq!(
        sqlite,
        versions("postgres"),
        "both dialects have the same migrations"
    );
    sqlite
}

pub fn parse(url: &str) -> DatabaseUrl {
    url.parse()
        .unwrap_or_else(|err| panic!("{url} should parse: {err}"))
}

impl Fixture {
    fn new(name: &'static str, url: &str, storage: Box<dyn Any + Send>) -> Self {
        let Storage {
            pets,
            keys,
            orders,
            categories,
            inventory,
            idempotency,
            events,
            webhooks,
            deliveries,
            ..
        } = open_storage(url);
        Self {
            name,
            url: url.to_owned(),
            repo: pets,
            keys,
            orders,
            categories,
            inventory,
            idempotency,
            events,
            webhooks,
            deliveries,
            _storage: storage,
        }
    }
}

/// Opens both ports (migrations included) the way the server does.
pub fn open_storage(url: &str) -> Storage {
    petstore_persistence::open(&parse(url), &PoolSettings::default())
        .unwrap_or_else(|err| panic!("cannot open {url}: {err}"))
}

/// Opens the repository (migrations included) the way the server does.
pub fn open(url: &str) -> Arc<dyn PetRepository> {
    petstore_persistence::open(&parse(url), &PoolSettings::default())
        .unwrap_or_else(|err| panic!("cannot open {url}: {err}"))
        .pets
}

pub fn new_pet(name: &str, category: i64, status: Option<PetStatus>) -> NewPet {
    NewPet::new(
        PetName::parse(name).expect("valid name"),
        CategoryId::parse(category).expect("valid category"),
        status,
    )
}

/// The result of a write made without an idempotency key, which is always carried out.
pub fn done<T>(written: Written<T>) -> T {
    written
        .done()
        .expect("a write without a key is carried out, never answered from a record")
}

/// Waits (10 s at most) until the SQL store's gauges show what `done` looks for.
pub async fn wait_until(what: &str, metrics: &PoolMetrics, done: impl Fn(&PoolMetrics) -> bool) {
    eventually(Duration::from_secs(10), what, async || {
        if done(metrics) {
            Ok(())
        } else {
            Err(format!(
                "{} connections in use, {} writes queued",
                metrics.connections_in_use(),
                metrics.queued_creates()
            ))
        }
    })
    .await;
}
