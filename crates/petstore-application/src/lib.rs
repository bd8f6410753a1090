//! The pet store's application layer: the ports the outside world plugs into (`ports`) and the
//! use cases that drive them (`PetService`; `KeyDirectory` for API keys). It depends on the domain alone; adapters for HTTP,
//! storage and time live in other crates and meet this one only through the traits in `ports`.

pub mod deprecation;
pub mod keys;
pub mod orders;
mod paging;
pub mod ports;
mod service;

pub use keys::{KeyDirectory, KeyRefusal, LookupError};
pub use orders::{OrderError, OrderPage, OrderService};
pub use ports::{
    BoxError, Clock, KeyChanges, KeyRepository, OrderFilter, OrderRepository, OrderWork,
    PetRepository, RepositoryError, Revocation, StorageFault, StoreTransaction, SystemClock,
};
pub use service::{GetPetError, PetPage, PetService};

#[cfg(any(test, feature = "mocks"))]
pub use ports::{
    MockClock, MockKeyRepository, MockOrderRepository, MockPetRepository, MockStoreTransaction,
};
