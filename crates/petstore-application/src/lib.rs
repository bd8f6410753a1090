//! The pet store's application layer: per resource (`pets`, `orders`, `categories`, `keys`, the
//! `events` feed, and the `idempotency` of retried writes), the ports the
//! outside world plugs into (each folder's `ports`), the use cases that drive them and their
//! errors. What every resource shares: storage's failure (`storage`), the clock port and the
//! page cut. It depends on the domain alone; adapters for HTTP, storage and time live in other
//! crates and meet this one only through the ports' traits.

pub mod categories;
mod clock;
pub mod events;
pub mod idempotency;
pub mod inventory;
pub mod keys;
pub mod orders;
mod paging;
pub mod pets;
mod storage;
pub mod webhooks;

pub use categories::{CategoryError, CategoryPage, CategoryRepository, CategoryService};
pub use clock::{Clock, SystemClock};
pub use events::{
    EventError, EventFeed, EventPage, EventService, FeedQuery, FeedRead, FeedReadError, PurgeRound,
    DEFAULT_EVENT_RETENTION,
};
pub use idempotency::{
    Admission, Answer, Claim, Fingerprint, Idempotency, IdempotencyRecord, IdempotencyStore,
    RecordPlan, Render, StoredResponse, Written,
};
pub use inventory::{InventoryRepository, InventoryService};
pub use keys::{KeyChanges, KeyDirectory, KeyRefusal, KeyRegistry, LookupError, Revocation};
pub use orders::{
    OrderError, OrderPage, OrderRepository, OrderService, OrderWork, StoreTransaction,
};
pub use pets::{
    deprecation, GetPetError, PetPage, PetRepository, PetService, PetWork, PetWrite, PetWriteError,
    VersionCondition,
};
pub use storage::{BoxError, RepositoryError, StorageFault};
pub use webhooks::{
    DeliveryQueue, DeliveryService, DeliverySettings, EventBody, SecretVault, WebhookError,
    WebhookRepository, WebhookSender, WebhookService,
};

#[cfg(any(test, feature = "mocks"))]
pub use categories::MockCategoryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use clock::MockClock;
#[cfg(any(test, feature = "mocks"))]
pub use events::MockEventFeed;
#[cfg(any(test, feature = "mocks"))]
pub use idempotency::MockIdempotencyStore;
#[cfg(any(test, feature = "mocks"))]
pub use inventory::MockInventoryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use keys::MockKeyRegistry;
#[cfg(any(test, feature = "mocks"))]
pub use orders::{MockOrderRepository, MockStoreTransaction};
#[cfg(any(test, feature = "mocks"))]
pub use pets::MockPetRepository;
