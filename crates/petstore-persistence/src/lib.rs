//! Storage adapters for the pet repository port.
//!
//! - [`DieselPetRepository`]: one diesel implementation serving SQLite files and PostgreSQL
//!   servers through an r2d2 pool, with migrations embedded from the top-level `migrations/`.
//! - [`memory::InMemoryPetRepository`]: pets kept in the process, for `memory:` and tests.
//!
//! The composition root needs two blocking calls: [`open`] (connect, migrate, hand back the
//! port) and [`migrate`]. Both fail with a [`StorageError`] worded for an operator's terminal;
//! [`StorageError::is_transient`] tells a start-up loop whether retrying can help.

mod error;
pub mod memory;
mod postgres_url;
mod settings;
mod sql;
mod url;

use std::sync::Arc;

use petstore_application::PetRepository;

pub use error::StorageError;
pub use memory::InMemoryPetRepository;
pub use postgres_url::PostgresUrl;
pub use settings::PoolSettings;
pub use sql::DieselPetRepository;
pub use url::DatabaseUrl;

/// Opens the storage behind `url`: an empty in-memory store for `memory:`, otherwise a pool on
/// the database with every pending migration applied. Blocking; call it off the async workers.
pub fn open(
    url: &DatabaseUrl,
    settings: &PoolSettings,
) -> Result<Arc<dyn PetRepository>, StorageError> {
    if let DatabaseUrl::Memory = url {
        return Ok(Arc::new(InMemoryPetRepository::new()));
    }
    let repository = DieselPetRepository::new(url, settings)?;
    let applied = repository.run_migrations()?;
    if !applied.is_empty() {
        tracing::info!(database = %url, versions = ?applied, "applied migrations");
    }
    Ok(Arc::new(repository))
}

/// Applies the pending migrations of the database behind `url` and returns their versions, in
/// the order applied (empty when it was up to date, and always for `memory:`). Blocking.
pub fn migrate(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Vec<String>, StorageError> {
    if let DatabaseUrl::Memory = url {
        return Ok(Vec::new());
    }
    sql::run_migrations(url, settings)
}
