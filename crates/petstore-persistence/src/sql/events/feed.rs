//! `DieselEventFeed`: the feed port on the `events` and `event_horizon` tables. Reads go
//! through the store's pool; the purge is a write (on SQLite the writer thread's turn).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use petstore_application::{EventFeed, FeedQuery, FeedRead, FeedReadError, RepositoryError};
use petstore_domain::{EventTypes, FeedPosition, VisibleOrders};

use super::rows::{EventRow, SELECTED};
use crate::sql::engine::connection::{AnyConnection, Generations};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::write_transaction::{in_write_transaction, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::DatabaseUrl;

/// What an order event's audience is compared with when the reader sees every order: no key id
/// is `*` (ids are hex).
const EVERY_ORDER: &str = "*";

/// The feed in the database behind a pool.
#[derive(Clone)]
pub struct DieselEventFeed {
    pool: Pool,
    writes: Writes,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
}

impl std::fmt::Debug for DieselEventFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselEventFeed")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, QueryableByName)]
struct Position {
    #[diesel(sql_type = BigInt)]
    commit_position: i64,
    #[diesel(sql_type = BigInt)]
    sequence: i64,
}

#[derive(Debug, QueryableByName)]
struct Written {
    #[diesel(sql_type = BigInt)]
    commit_position: i64,
    #[diesel(sql_type = BigInt)]
    sequence: i64,
    #[diesel(sql_type = BigInt)]
    occurred_at: i64,
}

#[derive(Debug, QueryableByName)]
struct Oldest {
    #[diesel(sql_type = Nullable<BigInt>)]
    occurred_at: Option<i64>,
}

/// What a read found: the rows, and the position of the last purged event.
type Found = (Vec<EventRow>, Option<FeedPosition>);

impl DieselEventFeed {
    pub(crate) fn new(
        pool: Pool,
        writes: Writes,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
    ) -> Self {
        Self {
            pool,
            writes,
            generations,
            health,
            url,
        }
    }

    async fn read_rows<T, Q>(&self, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_read()?;
        read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            query,
        )
        .await
    }
}

/// `AND type IN (...)` for a subset of the types (their names are the service's own
/// constants, never a client's text), nothing for every type.
fn types_filter(types: EventTypes) -> String {
    if types.is_every() {
        return String::new();
    }
    let names: Vec<String> = types.iter().map(|kind| format!("'{kind}'")).collect();
    format!(" AND type IN ({})", names.join(", "))
}

/// The events after `after` (rows first, then the horizon: a purge between the two can only
/// make the read look gone, never skip an event).
fn find(conn: &mut AnyConnection, query: &FeedQuery) -> QueryResult<Found> {
    // Without a position, from the start: nothing before the horizon is left to read.
    let after = query.after.unwrap_or(FeedPosition::START);
    let audience = match &query.visible {
        VisibleOrders::All => EVERY_ORDER.to_owned(),
        VisibleOrders::PlacedBy(key) => key.as_str().to_owned(),
    };
    let limit = i64::try_from(query.max).unwrap_or(i64::MAX);
    let types = types_filter(query.types);
    let rows = match conn {
        AnyConnection::Sqlite(sqlite) => diesel::sql_query(format!(
            "SELECT {SELECTED} FROM events WHERE sequence > ?{types} \
             AND (order_audience IS NULL OR ? = '{EVERY_ORDER}' OR order_audience = ?) \
             ORDER BY sequence LIMIT ?"
        ))
        .bind::<BigInt, _>(after.sequence)
        .bind::<Text, _>(&audience)
        .bind::<Text, _>(&audience)
        .bind::<BigInt, _>(limit)
        .load::<EventRow>(sqlite)?,
        AnyConnection::Postgresql(pg) => diesel::sql_query(format!(
            "SELECT {SELECTED} FROM events WHERE (commit_position, sequence) > ($1, $2) \
             AND commit_position < pg_snapshot_xmin(pg_current_snapshot())::text::bigint{types} \
             AND (order_audience IS NULL OR $3 = '{EVERY_ORDER}' OR order_audience = $3) \
             ORDER BY commit_position, sequence LIMIT $4"
        ))
        .bind::<BigInt, _>(after.commit)
        .bind::<BigInt, _>(after.sequence)
        .bind::<Text, _>(&audience)
        .bind::<BigInt, _>(limit)
        .load::<EventRow>(pg)?,
    };
    let horizon = diesel::sql_query("SELECT commit_position, sequence FROM event_horizon")
        .load::<Position>(conn)?
        .pop()
        .map(|at| FeedPosition::new(at.commit_position, at.sequence));
    Ok((rows, horizon))
}

/// The newest readable event's position, else the horizon's (every event purged).
fn head_on(conn: &mut AnyConnection) -> QueryResult<Option<FeedPosition>> {
    let newest = match conn {
        AnyConnection::Sqlite(sqlite) => diesel::sql_query(
            "SELECT commit_position, sequence FROM events ORDER BY sequence DESC LIMIT 1",
        )
        .load::<Position>(sqlite)?,
        // Only below the oldest open transaction, as reads: nothing can still commit before it.
        AnyConnection::Postgresql(pg) => diesel::sql_query(
            "SELECT commit_position, sequence FROM events \
             WHERE commit_position < pg_snapshot_xmin(pg_current_snapshot())::text::bigint \
             ORDER BY commit_position DESC, sequence DESC LIMIT 1",
        )
        .load::<Position>(pg)?,
    };
    let at = match newest.into_iter().next() {
        Some(at) => Some(at),
        None => diesel::sql_query("SELECT commit_position, sequence FROM event_horizon")
            .load::<Position>(conn)?
            .pop(),
    };
    Ok(at.map(|at| FeedPosition::new(at.commit_position, at.sequence)))
}

/// One purge round inside a write transaction: the first `max` readable events, of which the
/// leading ones written before `before_ms` are deleted, and the horizon moved to the last of
/// them. Deleting a leading run only keeps the feed's start contiguous.
fn purge_on(conn: &mut AnyConnection, before_ms: i64, max: usize) -> QueryResult<u64> {
    let limit = i64::try_from(max).unwrap_or(i64::MAX);
    let oldest = match conn {
        AnyConnection::Sqlite(sqlite) => diesel::sql_query(
            "SELECT commit_position, sequence, occurred_at FROM events ORDER BY sequence LIMIT ?",
        )
        .bind::<BigInt, _>(limit)
        .load::<Written>(sqlite)?,
        // Only below the oldest open transaction: nothing can still commit before what is
        // deleted.
        AnyConnection::Postgresql(pg) => diesel::sql_query(
            "SELECT commit_position, sequence, occurred_at FROM events \
             WHERE commit_position < pg_snapshot_xmin(pg_current_snapshot())::text::bigint \
             ORDER BY commit_position, sequence LIMIT $1",
        )
        .bind::<BigInt, _>(limit)
        .load::<Written>(pg)?,
    };
    let due = oldest
        .iter()
        .take_while(|event| event.occurred_at < before_ms)
        .count();
    let Some(last) = due.checked_sub(1).map(|at| &oldest[at]) else {
        return Ok(0);
    };
    let deleted = match conn {
        AnyConnection::Sqlite(sqlite) => {
            diesel::sql_query("DELETE FROM events WHERE sequence <= ?")
                .bind::<BigInt, _>(last.sequence)
                .execute(sqlite)?
        }
        AnyConnection::Postgresql(pg) => {
            diesel::sql_query("DELETE FROM events WHERE (commit_position, sequence) <= ($1, $2)")
                .bind::<BigInt, _>(last.commit_position)
                .bind::<BigInt, _>(last.sequence)
                .execute(pg)?
        }
    };
    let upsert = "INSERT INTO event_horizon (singleton, commit_position, sequence) \
        VALUES (1, {c}, {s}) ON CONFLICT (singleton) DO UPDATE \
        SET commit_position = excluded.commit_position, sequence = excluded.sequence \
        WHERE (event_horizon.commit_position, event_horizon.sequence) \
        < (excluded.commit_position, excluded.sequence)";
    let (commit, sequence) = match conn {
        AnyConnection::Sqlite(_) => ("?", "?"),
        AnyConnection::Postgresql(_) => ("$1", "$2"),
    };
    diesel::sql_query(upsert.replace("{c}", commit).replace("{s}", sequence))
        .bind::<BigInt, _>(last.commit_position)
        .bind::<BigInt, _>(last.sequence)
        .execute(conn)?;
    Ok(u64::try_from(deleted).unwrap_or(0))
}

#[async_trait]
impl EventFeed for DieselEventFeed {
    async fn read(&self, query: FeedQuery) -> Result<FeedRead, FeedReadError> {
        let sqlite = matches!(self.url, DatabaseUrl::Sqlite(_));
        // Every SQLite position has commit 0: another is from another store (a move from
        // PostgreSQL), whose positions mean nothing here.
        let after = query.after;
        if sqlite && after.is_some_and(|at| at != FeedPosition::START && at.commit != 0) {
            return Err(FeedReadError::Gone);
        }
        let (rows, horizon) = self.read_rows(move |conn| find(conn, &query)).await?;
        let after = match (after, horizon) {
            (Some(after), Some(horizon)) if after < horizon => return Err(FeedReadError::Gone),
            (Some(after), _) => after,
            (None, horizon) => horizon.unwrap_or(FeedPosition::START),
        };
        let entries = rows
            .into_iter()
            .map(EventRow::into_entry)
            .collect::<Result<_, _>>()?;
        Ok(FeedRead { entries, after })
    }

    async fn purge(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError> {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run(move |conn| {
                in_write_transaction(conn, no_turn, |conn| purge_on(conn, before_ms, max))
                    .map_err(|failure| failure.into_repository_error(&health))
            })
            .await?
    }

    async fn held_back_since(&self) -> Result<Option<i64>, RepositoryError> {
        if matches!(self.url, DatabaseUrl::Sqlite(_)) {
            return Ok(None);
        }
        let oldest = self
            .read_rows(|conn| {
                diesel::sql_query(
                    "SELECT MIN(occurred_at) AS occurred_at FROM events WHERE commit_position \
                     >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
                )
                .load::<Oldest>(conn)
            })
            .await?;
        Ok(oldest.into_iter().next().and_then(|row| row.occurred_at))
    }

    async fn head(&self) -> Result<Option<FeedPosition>, RepositoryError> {
        self.read_rows(head_on).await
    }
}
