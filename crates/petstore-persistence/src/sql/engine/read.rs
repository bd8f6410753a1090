//! Reads on a pooled connection that survive the connection being found closed (a PostgreSQL
//! restart closes them all): the read retires every connection opened before and is tried once
//! more on a new one, since a read changes nothing. On tokio's blocking pool for callers on an
//! async worker, with the failure translated for the port.

use diesel::QueryResult;
use petstore_application::RepositoryError;

use super::connection::{AnyConnection, Generations};
use super::errors;
use super::health::StoreHealth;
use super::Pool;
use crate::DatabaseUrl;

/// Why a read on a pooled connection failed.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// No connection within the checkout timeout.
    Checkout(r2d2::Error),
    Query(diesel::result::Error),
}

/// Runs the read `query` on a connection of `pool`. A connection found closed retires every
/// connection opened before it, and the query is tried once more on a new one: a read changes
/// nothing, so trying it again is safe.
pub(crate) fn read_with_retry<T>(
    pool: &Pool,
    generations: &Generations,
    health: &StoreHealth,
    query: impl Fn(&mut AnyConnection) -> QueryResult<T>,
) -> Result<T, ReadFailure> {
    let mut retried = false;
    loop {
        let mut conn =
            super::metrics::checkout(pool, Some(health), "read").map_err(ReadFailure::Checkout)?;
        match query(&mut conn) {
            Err(error) if errors::is_connection_lost(&error) => {
                generations.retire_all();
                if retried {
                    return Err(ReadFailure::Query(error));
                }
                retried = true;
            }
            outcome => return outcome.map_err(ReadFailure::Query),
        }
    }
}

/// [`read_with_retry`] on tokio's blocking pool, its failure translated for the port: the read
/// path every repository takes when a query may have to wait for a connection.
pub(crate) async fn read_off_the_workers<T, Q>(
    pool: &Pool,
    generations: &Generations,
    health: &StoreHealth,
    url: &DatabaseUrl,
    query: Q,
) -> Result<T, RepositoryError>
where
    T: Send + 'static,
    Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
{
    let (pool, generations, health, url) = (
        pool.clone(),
        generations.clone(),
        health.clone(),
        url.clone(),
    );
    super::blocking::in_callers_span(move || {
        read_with_retry(&pool, &generations, &health, query)
            .map_err(|failure| from_read(failure, &url))
    })
    .await
    .map_err(|error| RepositoryError::Unexpected(Box::new(error)))?
}

/// A failed read, for the port: no connection in time is `Unavailable`; a query's failure as
/// [`errors::from_query`] sorts it.
pub(crate) fn from_read(failure: ReadFailure, url: &DatabaseUrl) -> RepositoryError {
    match failure {
        ReadFailure::Checkout(error) => errors::from_checkout(&error, url),
        ReadFailure::Query(error) => errors::from_query(error),
    }
}
