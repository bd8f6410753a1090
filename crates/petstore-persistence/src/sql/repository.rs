//! `DieselPetRepository`: the repository port over an r2d2 pool of [`AnyConnection`]s. Each
//! query is written once for both backends.
//!
//! Diesel blocks, so every call, checkout included, runs on tokio's blocking pool; the async
//! workers only await the result. A checkout waits at most `checkout_timeout` (and, for
//! PostgreSQL, checks the connection with a round trip first, so connections killed by a server
//! restart are replaced rather than handed out) before the request fails as `Unavailable`.

use std::fmt;
use std::path::Path;

use async_trait::async_trait;
use diesel::connection::TransactionManager;
use diesel::prelude::*;
use diesel::r2d2::R2D2Connection;
use diesel::result::Error as DieselError;
use petstore_application::{PetRepository, RepositoryError};
use petstore_domain::{CategoryId, NewPet, Pet, PetId, PetName, PetStatus};

use super::connection::{AnyConnection, LogConnectionErrors, Manager, Target};
use super::errors::{self, Detail};
use super::migrations;
use super::schema::pets;
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// How often a write that failed to serialize is tried in all.
const WRITE_ATTEMPTS: u32 = 3;

/// Key of the PostgreSQL advisory lock inserts take turns on: "pets_ids" in ASCII, distinct from
/// the migration lock's key.
const INSERT_LOCK_KEY: i64 = 0x7065_7473_5f69_6473;

type Pool = r2d2::Pool<Manager>;

/// Pets in a SQLite file or a PostgreSQL database. Cheap to clone: clones share the pool.
#[derive(Clone)]
pub struct DieselPetRepository {
    pool: Pool,
    url: DatabaseUrl,
    settings: PoolSettings,
}

impl fmt::Debug for DieselPetRepository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DieselPetRepository")
            .field("url", &self.url)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl DieselPetRepository {
    /// A repository on `url` (SQLite or PostgreSQL). Opens no connection yet, so it can be built
    /// while the database is down; creates the SQLite file's directory if missing.
    pub fn new(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Self, StorageError> {
        if settings.max_size == 0 {
            return Err(invalid_settings("the pool size must be at least 1"));
        }
        if settings.checkout_timeout.is_zero() {
            return Err(invalid_settings("the pool timeout must be more than zero"));
        }
        let manager = manager_for(url, settings)?;
        if let DatabaseUrl::Sqlite(path) = url {
            create_parent_dir(path)?;
        }
        let pool = r2d2::Pool::builder()
            .max_size(settings.max_size)
            // Connections are opened on demand, so a down database costs no background retries
            // until someone asks for it.
            .min_idle(Some(0))
            .connection_timeout(settings.checkout_timeout)
            .test_on_check_out(manager.is_postgres())
            .error_handler(Box::new(LogConnectionErrors {
                database: url.clone(),
            }))
            .build_unchecked(manager);
        Ok(Self {
            pool,
            url: url.clone(),
            settings: *settings,
        })
    }

    /// Applies every pending migration on a connection of its own; returns the versions
    /// applied. Blocking.
    pub fn run_migrations(&self) -> Result<Vec<String>, StorageError> {
        let manager = manager_for(&self.url, &self.settings)?;
        let mut conn = r2d2::ManageConnection::connect(&manager)
            .map_err(|error| errors::connect_failed(&self.url, &error))?;
        migrations::run_pending(&mut conn).map_err(|error| {
            let connection_lost = conn.ping().is_err();
            errors::migration_failed(&self.url, &error, connection_lost)
        })
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

    /// The database this repository stores pets in.
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// Checks out a connection and runs `work` on it, all on the blocking pool.
    async fn with_connection<T, F>(&self, work: F) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut AnyConnection) -> Result<T, RepositoryError> + Send + 'static,
    {
        let pool = self.pool.clone();
        let url = self.url.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = pool
                .get()
                .map_err(|error| errors::from_checkout(&error, &url))?;
            work(&mut conn)
        })
        .await
        .map_err(|error| RepositoryError::Unexpected(Box::new(error)))?
    }
}

#[async_trait]
impl PetRepository for DieselPetRepository {
    async fn create(&self, new_pet: NewPet) -> Result<Pet, RepositoryError> {
        self.with_connection(move |conn| {
            let row = in_write_transaction(conn, |conn| {
                take_turn_to_insert(conn)?;
                diesel::insert_into(pets::table)
                    .values((
                        pets::name.eq(new_pet.name.as_str()),
                        pets::category_id.eq(new_pet.category_id.get()),
                        pets::status.eq(new_pet.status.as_str()),
                    ))
                    .returning(PetRow::COLUMNS)
                    .get_result::<PetRow>(conn)
            })
            .map_err(errors::from_query)?;
            row.into_pet()
        })
        .await
    }

    async fn list(
        &self,
        status: Option<PetStatus>,
        after: Option<PetId>,
        max: usize,
    ) -> Result<Vec<Pet>, RepositoryError> {
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        self.with_connection(move |conn| {
            let mut query = pets::table
                .select(PetRow::COLUMNS)
                .order(pets::id.asc())
                .limit(limit)
                .into_boxed();
            if let Some(status) = status {
                query = query.filter(pets::status.eq(status.as_str()));
            }
            if let Some(after) = after {
                query = query.filter(pets::id.gt(after.get()));
            }
            let rows = query.load(conn).map_err(errors::from_query)?;
            rows.into_iter().map(PetRow::into_pet).collect()
        })
        .await
    }

    async fn find(&self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        self.with_connection(move |conn| {
            pets::table
                .find(id.get())
                .select(PetRow::COLUMNS)
                .first(conn)
                .optional()
                .map_err(errors::from_query)?
                .map(PetRow::into_pet)
                .transpose()
        })
        .await
    }

    async fn ping(&self) -> Result<(), RepositoryError> {
        self.with_connection(|conn| conn.ping().map_err(errors::from_query))
            .await
    }
}

/// Runs a write as one transaction that holds the write lock from its first statement.
///
/// On SQLite, a plain (deferred) `BEGIN` takes the write lock only at the first write, and a
/// transaction that then finds the lock taken can fail with "database is locked" without
/// waiting; `BEGIN IMMEDIATE` waits for the lock (up to the busy timeout) before doing anything.
/// PostgreSQL locks rows, not the database, so a plain `BEGIN` does. A write that fails to
/// serialize is rolled back and tried again.
fn in_write_transaction<T>(
    conn: &mut AnyConnection,
    work: impl Fn(&mut AnyConnection) -> QueryResult<T>,
) -> QueryResult<T> {
    let mut attempt = 1;
    loop {
        match write_once(conn, &work) {
            Err(error) if errors::is_serialization_failure(&error) && attempt < WRITE_ATTEMPTS => {
                attempt += 1;
            }
            outcome => return outcome,
        }
    }
}

/// Makes ids become visible in the order they are handed out, so paging by "ids after the last
/// one seen" never steps over a pet.
///
/// PostgreSQL takes an identity value when the row is inserted but shows the row only at commit,
/// so of two concurrent inserts the one with the higher id can commit first; a page read between
/// the two commits ends past the lower id, and the next page starts after it. A
/// transaction-scoped advisory lock, taken before the insert and released after the commit is
/// visible, lets one insert at a time run, across every instance on the database. Inserts are
/// short, so the cost is a ceiling on creates per second (see `docs/benchmarks.md`), not on
/// reads, which never take the lock. SQLite needs nothing: `BEGIN IMMEDIATE` already admits one
/// writer at a time.
fn take_turn_to_insert(conn: &mut AnyConnection) -> QueryResult<()> {
    match conn {
        AnyConnection::Postgresql(pg) => {
            diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                .bind::<diesel::sql_types::BigInt, _>(INSERT_LOCK_KEY)
                .execute(pg)?;
            Ok(())
        }
        AnyConnection::Sqlite(_) => Ok(()),
    }
}

fn write_once<T>(
    conn: &mut AnyConnection,
    work: &impl Fn(&mut AnyConnection) -> QueryResult<T>,
) -> QueryResult<T> {
    type Transactions = <AnyConnection as Connection>::TransactionManager;
    match conn {
        AnyConnection::Sqlite(sqlite) => {
            diesel::connection::AnsiTransactionManager::begin_transaction_sql(
                sqlite,
                "BEGIN IMMEDIATE",
            )?;
        }
        AnyConnection::Postgresql(_) => Transactions::begin_transaction(conn)?,
    }
    match work(conn) {
        Ok(value) => {
            Transactions::commit_transaction(conn)?;
            Ok(value)
        }
        Err(error) => match Transactions::rollback_transaction(conn) {
            // The original error says more than a rollback on a connection already broken.
            Ok(()) | Err(DieselError::BrokenTransactionManager) => Err(error),
            Err(rollback_error) => Err(rollback_error),
        },
    }
}

/// A row of `pets`, before it is checked against the domain's rules.
#[derive(Queryable)]
struct PetRow {
    id: i64,
    name: String,
    category_id: i64,
    status: String,
}

impl PetRow {
    /// Spelled out rather than `as_select()`: the multi-backend `RETURNING` clause needs an
    /// expression every inner backend can render, which a plain column tuple is.
    const COLUMNS: (pets::id, pets::name, pets::category_id, pets::status) =
        (pets::id, pets::name, pets::category_id, pets::status);

    /// A stored row that breaks a domain rule means the data was changed behind the service's
    /// back: reported as unexpected (with the id, for the logs) rather than served.
    fn into_pet(self) -> Result<Pet, RepositoryError> {
        let id = self.id;
        let corrupt = |field: &str, reason: String| {
            RepositoryError::Unexpected(Box::new(Detail(format!(
                "stored pet {id} has an invalid {field}: {reason}"
            ))))
        };
        Ok(Pet {
            id: PetId::new(id),
            name: PetName::parse(self.name).map_err(|e| corrupt("name", e.to_string()))?,
            category_id: CategoryId::parse(self.category_id)
                .map_err(|e| corrupt("category id", e.to_string()))?,
            status: PetStatus::parse(&self.status).map_err(|e| corrupt("status", e.to_string()))?,
        })
    }
}

fn manager_for(url: &DatabaseUrl, settings: &PoolSettings) -> Result<Manager, StorageError> {
    let target = match url {
        DatabaseUrl::Postgres(pg) => Target::Postgres {
            libpq_url: pg.for_libpq(settings),
            shown: pg.redacted(),
            statement_timeout: Some(settings.statement_timeout).filter(|limit| !limit.is_zero()),
        },
        DatabaseUrl::Sqlite(path) => Target::Sqlite { path: path.clone() },
        DatabaseUrl::Memory => {
            return Err(StorageError::InvalidDatabaseUrl {
                reason: "`memory:` is not a SQL database; use the in-memory repository".into(),
            })
        }
    };
    Ok(Manager::new(target))
}

fn create_parent_dir(path: &Path) -> Result<(), StorageError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| StorageError::CreateDirectory {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

fn invalid_settings(reason: &str) -> StorageError {
    StorageError::InvalidSettings {
        reason: reason.to_owned(),
    }
}
