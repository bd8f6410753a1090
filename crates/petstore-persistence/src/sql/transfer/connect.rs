//! The one connection an export or an import runs on, and the few queries both ask.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use super::sql_text::Dialect;
use crate::sql::engine::connection::{AnyConnection, Generations, SqliteRole};
use crate::sql::engine::errors;
use crate::sql::engine::pool::manager_for;
use crate::{DatabaseUrl, PoolSettings, StorageError};

use crate::sql::engine::connection::on_connection;

/// A connection to `url` as a server's writer opens it, without a statement time limit.
pub(crate) fn open(
    url: &DatabaseUrl,
    settings: &PoolSettings,
) -> Result<AnyConnection, StorageError> {
    let manager = manager_for(
        url,
        settings,
        SqliteRole::ReadWrite,
        &Generations::default(),
    )?;
    let mut conn = manager
        .establish()
        .map_err(|error| errors::connect_failed(url, &error))?;
    if let AnyConnection::Postgresql(pg) = &mut conn {
        diesel::connection::SimpleConnection::batch_execute(
            pg,
            "SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0;",
        )
        .map_err(|error| errors::query_failed(url, &error))?;
    }
    Ok(conn)
}

pub(crate) fn dialect(conn: &AnyConnection) -> Dialect {
    match conn {
        AnyConnection::Sqlite(_) => Dialect::Sqlite,
        AnyConnection::Postgresql(_) => Dialect::Postgres,
    }
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

/// The migrations applied to the database, oldest first.
pub(crate) fn applied_versions(conn: &mut AnyConnection) -> QueryResult<Vec<String>> {
    let query =
        diesel::sql_query("SELECT version FROM __diesel_schema_migrations ORDER BY version");
    let rows: Vec<Version> = on_connection!(conn, |c| query.load(c))?;
    Ok(rows.into_iter().map(|row| row.version).collect())
}

#[derive(QueryableByName)]
pub(crate) struct Number {
    #[diesel(sql_type = BigInt)]
    pub(crate) n: i64,
}

/// The one number `sql` (`SELECT ... AS n`) answers.
pub(crate) fn number(conn: &mut AnyConnection, sql: &str) -> QueryResult<i64> {
    let query = diesel::sql_query(sql);
    let row: Number = on_connection!(conn, |c| query.get_result(c))?;
    Ok(row.n)
}

/// Runs `sql` (one or more statements, no parameters).
pub(crate) fn run(conn: &mut AnyConnection, sql: &str) -> QueryResult<()> {
    on_connection!(conn, |c| {
        diesel::connection::SimpleConnection::batch_execute(c, sql)
    })
}
