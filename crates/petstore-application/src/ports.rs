//! Every port of the application in one place: what a storage backend and a clock must do.
//! Adapters translate their own failures into [`RepositoryError`] so that use cases (and the
//! HTTP layer after them) never see a driver's error type.

use std::time::SystemTime;

use async_trait::async_trait;
use petstore_domain::{
    ApiKey, KeyId, NewOrder, NewPet, Order, OrderId, OrderStatus, Pet, PetId, PetStatus,
};

use crate::orders::OrderError;

pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why storage could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// Storage cannot be reached right now (pool exhausted, server down, timed out). Worth
    /// retrying later; the request changed nothing.
    #[error("storage is unavailable")]
    Unavailable(#[source] BoxError),
    /// Anything else. The source carries the details for the logs, never for clients.
    #[error("storage failed unexpectedly")]
    Unexpected(#[source] BoxError),
}

/// A fault the storage adapter knows its store is in, kept by the adapter's background probe
/// until the store works again. Adapters put it as the source of [`RepositoryError::Unavailable`]
/// when they refuse a request at once because of it, so callers can say what is wrong without
/// knowing the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StorageFault {
    /// The database server cannot be reached; nothing is tried until it can.
    #[error("the database is not reachable")]
    Unreachable,
    /// The filesystem holding the database is full; reads still work, writes are refused.
    #[error("the storage is full")]
    Full,
    /// The database cannot be written (file or filesystem read-only); reads still work.
    #[error("the storage is read-only")]
    ReadOnly,
}

/// Where pets are kept. Implementations must assign ids that are unique and increasing, and must
/// only return from `create` once the pet is durably stored.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PetRepository: Send + Sync + 'static {
    /// Stores a new pet and returns it with its assigned id.
    async fn create(&self, new_pet: NewPet) -> Result<Pet, RepositoryError>;

    /// Pets with an id greater than `after` (from the first when `None`) and, when given, the
    /// status `status`, in ascending id order, at most `max` of them.
    async fn list(
        &self,
        status: Option<PetStatus>,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError>;

    /// The pet with this id, if there is one.
    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError>;

    /// The pets with these ids (those that exist), in ascending id order.
    async fn find_many(&self, ids: &[PetId]) -> Result<Vec<Pet>, RepositoryError>;

    /// Succeeds when storage answers; used by readiness checks.
    async fn ping(&self) -> Result<(), RepositoryError>;
}

/// One transaction over pets and orders, as [`OrderRepository::in_transaction`] hands it to a
/// use case. Blocking: the adapter runs the work on a thread that may block. What is read
/// `for_update` stays locked until the transaction ends, so two transactions on the same pet
/// or order take turns.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait StoreTransaction {
    fn pet_for_update(&mut self, id: PetId) -> Result<Option<Pet>, RepositoryError>;
    fn order_for_update(&mut self, id: OrderId) -> Result<Option<Order>, RepositoryError>;
    /// Stores `pet`'s status (the only thing about a pet an order changes).
    fn save_pet_status(&mut self, pet: &Pet) -> Result<(), RepositoryError>;
    fn insert_order(&mut self, order: NewOrder) -> Result<Order, RepositoryError>;
    /// Stores `order`'s status and ship date.
    fn save_order(&mut self, order: &Order) -> Result<(), RepositoryError>;
}

/// A use case's work inside one transaction. It may run more than once (a transaction that
/// fails to serialize is tried again), so it acts only through the transaction it is given.
pub type OrderWork =
    Box<dyn Fn(&mut dyn StoreTransaction) -> Result<Order, OrderError> + Send + Sync>;

/// Which orders a listing wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderFilter {
    pub status: Option<OrderStatus>,
    pub pet_id: Option<PetId>,
}

/// Where orders are kept, with the pets they move.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait OrderRepository: Send + Sync + 'static {
    /// Runs `work` in one transaction over pets and orders: everything it did is committed
    /// when it returns `Ok`, nothing when it returns `Err` (which is passed on as it is).
    async fn in_transaction(&self, work: OrderWork) -> Result<Order, OrderError>;

    /// The order with this id, if there is one.
    async fn find(&self, id: OrderId) -> Result<Option<Order>, RepositoryError>;

    /// Orders matching `filter` with an id greater than `after`, ascending, at most `max`.
    async fn list(
        &self,
        filter: OrderFilter,
        after: Option<OrderId>,
        max: usize,
    ) -> Result<Vec<Order>, RepositoryError>;
}

/// Where issued API keys are recorded: the registry every instance reads.
///
/// Blocking, unlike [`PetRepository`]: it is called by the key directory's background thread
/// and by the `petstore keys` commands, never on a request's path.
///
/// Implementations give every insert and revocation a *revision* higher than every revision
/// already visible to a reader, so that [`changes_since`](Self::changes_since) with the last
/// revision seen never misses a change.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait KeyRepository: Send + Sync + 'static {
    /// Records a newly issued key.
    fn insert(&self, key: &ApiKey) -> Result<(), RepositoryError>;

    /// Every key, oldest first.
    fn list(&self) -> Result<Vec<ApiKey>, RepositoryError>;

    /// Marks the key revoked at `at` (Unix seconds) unless it already is.
    fn revoke(&self, id: &KeyId, at: i64) -> Result<Revocation, RepositoryError>;

    /// The keys inserted or revoked after `revision`, and the revision that brings a reader up
    /// to date with them.
    fn changes_since(&self, revision: i64) -> Result<KeyChanges, RepositoryError>;

    /// Records that each key was last used at the given time (Unix seconds), unless a later use
    /// is recorded already.
    fn record_use(&self, uses: &[(KeyId, i64)]) -> Result<(), RepositoryError>;
}

/// What [`KeyRepository::changes_since`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyChanges {
    pub keys: Vec<ApiKey>,
    pub revision: i64,
}

/// What [`KeyRepository::revoke`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// The key is now revoked.
    Revoked(ApiKey),
    /// It was revoked before (at its `revoked_at`); nothing changed.
    AlreadyRevoked(ApiKey),
    /// No key has that id.
    NotFound,
}

/// The time, as far as the use cases are concerned. A port so that date rules (the sunset of
/// `getPet`) can be tested at any instant.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> SystemTime;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
