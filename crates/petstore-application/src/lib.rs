//! The pet store's application layer: the ports the outside world plugs into (`ports`) and the
//! use cases that drive them (`PetService`). It depends on the domain alone; adapters for HTTP,
//! storage and time live in other crates and meet this one only through the traits in `ports`.

pub mod deprecation;
pub mod ports;
mod service;

pub use ports::{BoxError, Clock, PetRepository, RepositoryError, SystemClock};
pub use service::{GetPetError, PetPage, PetService};

#[cfg(any(test, feature = "mocks"))]
pub use ports::{MockClock, MockPetRepository};
