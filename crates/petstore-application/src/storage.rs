//! What every port's storage failure is, whatever the resource: adapters translate their own
//! failures into [`RepositoryError`] so that use cases (and the HTTP layer after them) never see
//! a driver's error type.

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
