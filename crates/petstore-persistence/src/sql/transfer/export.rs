//! `export`: every table of [`TABLES`] written as JSON Lines, from one snapshot (a read
//! transaction: `REPEATABLE READ` on PostgreSQL, one SQLite read transaction, neither of which
//! holds up writers), a page of rows at a time in key order, so memory stays the same at any
//! size.

use std::collections::BTreeMap;
use std::io::Write;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde_json::Value;

use super::connect;
use super::format::{End, EndLine, ExportHeader, FORMAT_NAME, FORMAT_VERSION};
use super::sql_text::{self, Dialect, BATCH};
use super::tables::{Kind, Table, TABLES};
use crate::sql::engine::connection::on_connection;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::migrations;
use crate::sql::engine::sqlite_file::unix_now;
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// Why an export stopped; what was written so far has no end line, so no import accepts it.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("DATABASE_URL=memory: keeps nothing to export")]
    Memory,
    #[error("there is no database at {0}")]
    NoDatabase(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(
        "the database {database} is at migration {database_version} and this binary at \
         {binary_version}: export with the release that serves it (or run `petstore migrate` \
         with this one first)"
    )]
    SchemaMismatch {
        database: String,
        database_version: String,
        binary_version: String,
    },
    #[error("reading {database} failed: {reason}")]
    Query { database: String, reason: String },
    #[error("cannot write the export: {0}")]
    Write(#[source] std::io::Error),
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct ExportSummary {
    pub header: ExportHeader,
    /// Rows written, by table.
    pub rows: BTreeMap<String, u64>,
}

/// Writes the database behind `url` to `out`, naming `key_id` as the secret of its keys.
/// Blocking.
pub fn export(
    url: &DatabaseUrl,
    settings: &PoolSettings,
    key_id: &str,
    out: &mut dyn Write,
) -> Result<ExportSummary, ExportError> {
    match url {
        DatabaseUrl::Memory => return Err(ExportError::Memory),
        DatabaseUrl::Sqlite(path) if !path.is_file() => {
            return Err(ExportError::NoDatabase(path.display().to_string()))
        }
        _ => {}
    }
    let mut conn = connect::open(url, settings)?;
    let failed = |err: diesel::result::Error| ExportError::Query {
        database: url.to_string(),
        reason: url.scrub(&err.to_string()),
    };
    let begin = match connect::dialect(&conn) {
        Dialect::Sqlite => "BEGIN",
        Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    };
    connect::run(&mut conn, begin).map_err(failed)?;
    let written = write_snapshot(&mut conn, url, key_id, out);
    // Read only: nothing to keep; ending it lets go of the snapshot.
    let _ = connect::run(&mut conn, "ROLLBACK");
    written
}

fn write_snapshot(
    conn: &mut AnyConnection,
    url: &DatabaseUrl,
    key_id: &str,
    out: &mut dyn Write,
) -> Result<ExportSummary, ExportError> {
    let failed = |err: diesel::result::Error| ExportError::Query {
        database: url.to_string(),
        reason: url.scrub(&err.to_string()),
    };
    let database_version = connect::applied_versions(conn)
        .map_err(failed)?
        .pop()
        .unwrap_or_default();
    let binary_version = migrations::known_versions().pop().unwrap_or_default();
    if database_version != binary_version {
        return Err(ExportError::SchemaMismatch {
            database: url.to_string(),
            database_version,
            binary_version,
        });
    }
    let header = ExportHeader {
        format: FORMAT_NAME.to_owned(),
        version: FORMAT_VERSION,
        schema_version: database_version,
        key_id: key_id.to_owned(),
        exported_at: unix_now(),
    };
    write_json_line(out, &header)?;
    let dialect = connect::dialect(conn);
    let mut end = End::default();
    for table in TABLES {
        let rows = write_table(conn, dialect, table, out).map_err(|err| match err {
            PageError::Query(err) => failed(err),
            PageError::Write(err) => ExportError::Write(err),
        })?;
        end.rows.insert(table.name.to_owned(), rows);
        if table.has_sequence {
            let value =
                connect::number(conn, &sql_text::sequence_value(dialect, table)).map_err(failed)?;
            end.sequences.insert(table.name.to_owned(), value);
        }
    }
    write_json_line(out, &EndLine { end: end.clone() })?;
    out.flush().map_err(ExportError::Write)?;
    Ok(ExportSummary {
        header,
        rows: end.rows,
    })
}

fn write_json_line(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), ExportError> {
    serde_json::to_writer(&mut *out, value)
        .map_err(|err| ExportError::Write(std::io::Error::other(err)))?;
    out.write_all(b"\n").map_err(ExportError::Write)
}

enum PageError {
    Query(diesel::result::Error),
    Write(std::io::Error),
}

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    line: String,
}

/// Writes every row of `table`, a page at a time; returns how many.
fn write_table(
    conn: &mut AnyConnection,
    dialect: Dialect,
    table: &Table,
    out: &mut dyn Write,
) -> Result<u64, PageError> {
    let first = sql_text::select_page(dialect, table, false);
    let next = sql_text::select_page(dialect, table, true);
    let mut after: Option<Vec<Value>> = None;
    let mut written = 0;
    loop {
        let lines = page(conn, table, &first, &next, after.as_deref()).map_err(PageError::Query)?;
        for line in &lines {
            out.write_all(line.line.as_bytes())
                .map_err(PageError::Write)?;
            out.write_all(b"\n").map_err(PageError::Write)?;
        }
        written += lines.len() as u64;
        match lines.last() {
            Some(last) if lines.len() == BATCH => after = Some(key_of(table, &last.line)?),
            _ => return Ok(written),
        }
    }
}

/// The key columns' values of the row in `line`, where the next page starts after.
fn key_of(table: &Table, line: &str) -> Result<Vec<Value>, PageError> {
    let value: Value =
        serde_json::from_str(line).map_err(|err| PageError::Write(std::io::Error::other(err)))?;
    Ok(table
        .key()
        .iter()
        .map(|column| value["row"][column.name].clone())
        .collect())
}

/// One page of `table`'s lines after the key `after`, or its first.
fn page(
    conn: &mut AnyConnection,
    table: &Table,
    first: &str,
    next: &str,
    after: Option<&[Value]>,
) -> QueryResult<Vec<Line>> {
    let Some(after) = after else {
        let query = diesel::sql_query(first);
        return on_connection!(conn, |c| query.load(c));
    };
    on_connection!(conn, |c| {
        let mut query = diesel::sql_query(next).into_boxed();
        for (column, value) in table.key().iter().zip(after) {
            query = match column.kind {
                Kind::Integer => query.bind::<BigInt, _>(value.as_i64().unwrap_or(i64::MIN)),
                Kind::Text | Kind::Bytes => {
                    query.bind::<Text, _>(value.as_str().unwrap_or_default().to_owned())
                }
            };
        }
        query.load(c)
    })
}
