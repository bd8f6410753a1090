//! `DieselKeyRegistry`: the key registry port on the `api_keys` table, read on the store's pool
//! and written like the store's other writes (`engine/writes.rs`: on SQLite by the writer
//! thread). Every call is blocking (the port says so).
//!
//! Inserts and revocations take the next `revision` inside a write transaction that writers take
//! turns on (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a table lock readers do not wait for), so a
//! revision is only ever visible after every smaller one: a reader asking for the changes past
//! the last revision it saw cannot miss one.

use diesel::prelude::*;
use petstore_application::{KeyChanges, KeyRegistry, RepositoryError, Revocation};
use petstore_domain::{ApiKey, KeyId, KeyName, KeyScope, TokenDigest};

use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::errors::{self, ScrubbedMessage};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::write_transaction::{in_write_transaction, lock_on_postgres, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::sql::schema::api_keys;
use crate::DatabaseUrl;

/// The registry in the database behind a pool.
#[derive(Clone)]
pub struct DieselKeyRegistry {
    pool: Pool,
    writes: Writes,
    health: StoreHealth,
    url: DatabaseUrl,
}

const COLUMNS: (
    api_keys::id,
    api_keys::name,
    api_keys::scope,
    api_keys::created_at,
    api_keys::expires_at,
    api_keys::revoked_at,
    api_keys::last_used_at,
    api_keys::token_sha256,
) = (
    api_keys::id,
    api_keys::name,
    api_keys::scope,
    api_keys::created_at,
    api_keys::expires_at,
    api_keys::revoked_at,
    api_keys::last_used_at,
    api_keys::token_sha256,
);

/// A row as stored; turned into an [`ApiKey`] by checking every field again.
#[derive(Queryable)]
struct KeyRow {
    id: String,
    name: String,
    scope: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
    last_used_at: Option<i64>,
    token_sha256: Option<Vec<u8>>,
}

impl KeyRow {
    fn into_key(self) -> Result<ApiKey, RepositoryError> {
        let corrupt = |what: &str| {
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "the api_keys row {} holds an invalid {what}",
                self.id
            ))))
        };
        Ok(ApiKey {
            id: KeyId::parse(&self.id).map_err(|_| corrupt("id"))?,
            name: KeyName::parse_stored(&self.name).map_err(|_| corrupt("name"))?,
            scope: self
                .scope
                .parse::<KeyScope>()
                .map_err(|_| corrupt("scope"))?,
            token_digest: self
                .token_sha256
                .as_deref()
                .map(|digest| <[u8; 32]>::try_from(digest).map(TokenDigest))
                .transpose()
                .map_err(|_| corrupt("token digest"))?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            last_used_at: self.last_used_at,
        })
    }
}

/// Lets one registry writer at a time through on PostgreSQL, across instances; SQLite's
/// `BEGIN IMMEDIATE` already does.
fn take_turn_to_write(conn: &mut AnyConnection) -> QueryResult<()> {
    lock_on_postgres(conn, |pg| {
        diesel::sql_query("LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE").execute(pg)
    })
}

fn next_revision(conn: &mut AnyConnection) -> QueryResult<i64> {
    let latest: Option<i64> = api_keys::table
        .select(diesel::dsl::max(api_keys::revision))
        .first(conn)?;
    Ok(latest.unwrap_or(0) + 1)
}

impl std::fmt::Debug for DieselKeyRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselKeyRegistry")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl DieselKeyRegistry {
    pub(crate) fn new(pool: Pool, writes: Writes, health: StoreHealth, url: DatabaseUrl) -> Self {
        Self {
            pool,
            writes,
            health,
            url,
        }
    }

    /// Runs the read `work` on a connection of the pool.
    fn with_connection<T>(
        &self,
        work: impl FnOnce(&mut AnyConnection) -> Result<T, RepositoryError>,
    ) -> Result<T, RepositoryError> {
        // While the database is known unreachable, fail at once rather than wait out a
        // checkout: the refresher then tries again every quarter second and is current within
        // one of them once the database is back (and `/readyz` with it).
        self.health.admit_read()?;
        let mut conn = self
            .pool
            .get()
            .map_err(|error| errors::from_checkout(&error, &self.url))?;
        work(&mut conn)
    }

    /// Runs `work` as one write transaction, after `take_turn`.
    fn write<T>(
        &self,
        take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
        work: impl Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    ) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
    {
        // As for reads: while the database is known unreachable, fail at once.
        self.health.admit_read()?;
        self.writes.run_blocking(move |conn| {
            in_write_transaction(conn, take_turn, work)
                .map_err(|failure| errors::from_query(failure.into_error()))
        })?
    }
}

impl KeyRegistry for DieselKeyRegistry {
    fn insert(&self, key: &ApiKey) -> Result<(), RepositoryError> {
        let key = key.clone();
        self.write(take_turn_to_write, move |conn| {
            let revision = next_revision(conn)?;
            diesel::insert_into(api_keys::table)
                .values((
                    api_keys::id.eq(key.id.as_str()),
                    api_keys::name.eq(key.name.as_str()),
                    api_keys::scope.eq(key.scope.as_str()),
                    api_keys::created_at.eq(key.created_at),
                    api_keys::expires_at.eq(key.expires_at),
                    api_keys::revoked_at.eq(key.revoked_at),
                    api_keys::last_used_at.eq(key.last_used_at),
                    api_keys::revision.eq(revision),
                    api_keys::token_sha256
                        .eq(key.token_digest.as_ref().map(|digest| digest.0.as_slice())),
                ))
                .execute(conn)
        })
        .map(|_| ())
    }

    fn list(&self) -> Result<Vec<ApiKey>, RepositoryError> {
        let rows = self.with_connection(|conn| {
            api_keys::table
                .select(COLUMNS)
                .order((api_keys::created_at, api_keys::id))
                .load::<KeyRow>(conn)
                .map_err(errors::from_query)
        })?;
        rows.into_iter().map(KeyRow::into_key).collect()
    }

    fn revoke(&self, id: &KeyId, at: i64) -> Result<Revocation, RepositoryError> {
        let id = id.clone();
        let row = self.write(take_turn_to_write, move |conn| {
            let Some(mut row) = api_keys::table
                .find(id.as_str())
                .select(COLUMNS)
                .first::<KeyRow>(conn)
                .optional()?
            else {
                return Ok(None);
            };
            if row.revoked_at.is_some() {
                return Ok(Some((row, false)));
            }
            let revision = next_revision(conn)?;
            diesel::update(api_keys::table.find(id.as_str()))
                .set((api_keys::revoked_at.eq(at), api_keys::revision.eq(revision)))
                .execute(conn)?;
            row.revoked_at = Some(at);
            Ok(Some((row, true)))
        })?;
        Ok(match row {
            None => Revocation::NotFound,
            Some((row, true)) => Revocation::Revoked(row.into_key()?),
            Some((row, false)) => Revocation::AlreadyRevoked(row.into_key()?),
        })
    }

    fn changes_since(&self, revision: i64) -> Result<KeyChanges, RepositoryError> {
        let rows = self.with_connection(|conn| {
            api_keys::table
                .filter(api_keys::revision.gt(revision))
                .select((COLUMNS, api_keys::revision))
                .order(api_keys::revision)
                .load::<(KeyRow, i64)>(conn)
                .map_err(errors::from_query)
        })?;
        let latest = rows.last().map_or(revision, |(_, latest)| *latest);
        let keys = rows
            .into_iter()
            .map(|(row, _)| row.into_key())
            .collect::<Result<_, _>>()?;
        Ok(KeyChanges {
            keys,
            revision: latest,
        })
    }

    fn record_use(&self, uses: &[(KeyId, i64)]) -> Result<(), RepositoryError> {
        // Rows are locked in the order they are updated: in key-id order on every instance, two
        // instances recording the same keys at once take turns instead of deadlocking.
        let mut uses = uses.to_vec();
        uses.sort_unstable_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
        // Record-keeping writes (last use) need no ordering.
        self.write(no_turn, move |conn| {
            for (id, at) in &uses {
                diesel::update(
                    api_keys::table.find(id.as_str()).filter(
                        api_keys::last_used_at
                            .is_null()
                            .or(api_keys::last_used_at.lt(*at)),
                    ),
                )
                .set(api_keys::last_used_at.eq(*at))
                .execute(conn)?;
            }
            Ok(())
        })
    }
}
