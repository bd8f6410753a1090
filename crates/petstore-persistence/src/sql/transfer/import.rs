//! `import`: an export read back into a database of either backend, in ONE transaction, so a
//! bad line, a file cut short or a process killed half-way leaves the target as it was. Rows
//! keep their ids; each sequence is moved past the highest id handed out. Lines are read one at
//! a time and inserted a batch at a time, so memory stays the same at any size.
//!
//! Whether a server uses the target is asked as a restore asks it on SQLite (the `-shm` file's
//! lock, then an exclusive lock taken without waiting and held for the whole import); on
//! PostgreSQL, whether any other client is connected to the database (autovacuum's workers are
//! not clients).

use std::collections::BTreeMap;
use std::io::BufRead;

use diesel::prelude::*;
use diesel::sql_types::Text;
use serde_json::{Map, Value};

use super::connect;
use super::format::{EndLine, ExportHeader, FORMAT_NAME, FORMAT_VERSION};
use super::sql_text::{self, Dialect, BATCH};
use super::tables::{self, Kind, Table, TABLES};
use crate::sql::engine::connection::on_connection;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::{migrations, sqlite_file};
use crate::{DatabaseUrl, PoolSettings, StorageError};

/// Longest line read; a longer one is no row of an export.
const MAX_LINE_BYTES: u64 = 1 << 20;

/// Why nothing was imported; the target is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("DATABASE_URL=memory: lives inside one `petstore serve` process; import into a SQLite file or PostgreSQL")]
    Memory,
    #[error("cannot read the export: {0}")]
    Read(#[source] std::io::Error),
    #[error("this is not a petstore export: {0}")]
    NotAnExport(String),
    #[error("this export is in version {0} of the format, which this binary does not read")]
    UnsupportedVersion(u32),
    #[error(
        "this export was made at migration {0}, which this binary does not know: import it with \
         that release or a later one"
    )]
    Newer(String),
    #[error(
        "the export holds keys signed with the secret whose key id is {file}, but the configured \
         PETSTORE_KEY_SECRET has the key id {configured}: none of its keys would work. Configure \
         the secret it was exported with, or pass --force-key-id to import it anyway"
    )]
    KeyIdMismatch { file: String, configured: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("{0}; stop the servers on it first, or pass --force")]
    InUse(String),
    #[error(
        "the database {0} is not empty; import into a new database, or pass --force to replace \
         its pets, categories, orders and keys"
    )]
    NotEmpty(String),
    #[error("line {line}: {reason}")]
    BadLine { line: u64, reason: String },
    #[error(
        "the export ends at line {0} without its end line: it was cut short; nothing was imported"
    )]
    Truncated(u64),
    #[error("the export's end line counts {expected} rows of {table}, but {found} came before it")]
    CountMismatch {
        table: String,
        expected: u64,
        found: u64,
    },
    #[error("the database refused the rows of lines {first} to {last}: {reason}")]
    Refused {
        first: u64,
        last: u64,
        reason: String,
    },
    #[error("importing into {database} failed: {reason}")]
    Query { database: String, reason: String },
}

/// How an import treats the target and the file.
#[derive(Debug, Clone)]
pub struct ImportOptions<'a> {
    /// The key id of the configured secret.
    pub key_id: &'a str,
    /// Import a file whose keys another secret signed.
    pub accept_other_key_id: bool,
    /// Import into a database that is not empty (its rows are replaced) or that a server uses.
    pub force: bool,
}

/// What an import read.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    pub header: ExportHeader,
    /// Rows imported, by table.
    pub rows: BTreeMap<String, u64>,
}

/// Reads the export in `input` into the database behind `url`. Blocking.
pub fn import(
    url: &DatabaseUrl,
    settings: &PoolSettings,
    options: &ImportOptions<'_>,
    input: &mut dyn BufRead,
) -> Result<ImportSummary, ImportError> {
    if *url == DatabaseUrl::Memory {
        return Err(ImportError::Memory);
    }
    let mut lines = Lines { input, number: 0 };
    let header = read_header(&mut lines, options)?;
    let mut conn = begin(url, settings, options.force)?;
    let imported = import_rows(&mut conn, url, options, &mut lines);
    match imported {
        Ok(rows) => {
            connect::run(&mut conn, "COMMIT").map_err(query_failed(url))?;
            analyse_on_postgres(&mut conn);
            Ok(ImportSummary { header, rows })
        }
        Err(err) => {
            let _ = connect::run(&mut conn, "ROLLBACK");
            Err(err)
        }
    }
}

/// Gives PostgreSQL's planner the imported tables' statistics at once. Until autovacuum
/// analyses a table it guesses them, and its guess for the live pets (`removed_at IS NULL`: one
/// row in 200) can plan a listing that reads every pet (`docs/benchmarks.md`). SQLite plans
/// without statistics, and is given none. The rows are committed whatever becomes of this, so
/// a failure is only a warning.
fn analyse_on_postgres(conn: &mut AnyConnection) {
    if let AnyConnection::Postgresql(_) = conn {
        if let Err(err) = connect::run(conn, "ANALYZE") {
            tracing::warn!(reason = %err, "the import is stored, but analysing its tables failed; autovacuum will");
        }
    }
}

fn query_failed(url: &DatabaseUrl) -> impl Fn(diesel::result::Error) -> ImportError + '_ {
    move |err| ImportError::Query {
        database: url.to_string(),
        reason: url.scrub(&err.to_string()),
    }
}

/// The input's lines, numbered from 1.
struct Lines<'a> {
    input: &'a mut dyn BufRead,
    number: u64,
}

impl Lines<'_> {
    /// The next line without its line break, `None` at the end.
    fn next(&mut self) -> Result<Option<String>, ImportError> {
        let mut bytes = Vec::new();
        let read = std::io::Read::take(&mut *self.input, MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(ImportError::Read)?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        if bytes.last() != Some(&b'\n') {
            if bytes.len() as u64 > MAX_LINE_BYTES {
                return Err(self.bad("longer than any row of an export"));
            }
            // The last line of a file cut short mid-line: no line of an export ends so.
            return Err(ImportError::Truncated(self.number));
        }
        bytes.pop();
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| self.bad("not UTF-8"))
    }

    fn bad(&self, reason: impl Into<String>) -> ImportError {
        ImportError::BadLine {
            line: self.number,
            reason: reason.into(),
        }
    }
}

fn read_header(
    lines: &mut Lines<'_>,
    options: &ImportOptions<'_>,
) -> Result<ExportHeader, ImportError> {
    let not_a_header =
        || ImportError::NotAnExport("its first line is not a petstore export's header".into());
    let first = match lines.next() {
        Ok(Some(first)) => first,
        Ok(None) => return Err(ImportError::NotAnExport("the file is empty".into())),
        Err(ImportError::Read(err)) => return Err(ImportError::Read(err)),
        Err(_) => return Err(not_a_header()),
    };
    let header: ExportHeader = serde_json::from_str(&first).map_err(|_| not_a_header())?;
    if header.format != FORMAT_NAME {
        return Err(ImportError::NotAnExport(format!(
            "its format is {:?}, not {FORMAT_NAME:?}",
            header.format
        )));
    }
    if header.version != FORMAT_VERSION {
        return Err(ImportError::UnsupportedVersion(header.version));
    }
    if !migrations::known_versions().contains(&header.schema_version) {
        return Err(ImportError::Newer(header.schema_version));
    }
    if header.key_id != options.key_id && !options.accept_other_key_id {
        return Err(ImportError::KeyIdMismatch {
            file: header.key_id,
            configured: options.key_id.to_owned(),
        });
    }
    Ok(header)
}

/// The connection with the import's transaction begun, on a migrated database, after the
/// checks that a server is not using it (unless `force`). On PostgreSQL the check comes first,
/// on the connection that then migrates: a session of this process closed a moment before
/// would still be counted as another.
fn begin(
    url: &DatabaseUrl,
    settings: &PoolSettings,
    force: bool,
) -> Result<AnyConnection, ImportError> {
    let failed = query_failed(url);
    match url {
        DatabaseUrl::Sqlite(path) => {
            crate::migrate(url, settings)?;
            let in_use = crate::sql::engine::in_use::is_open_elsewhere(path)
                .map_err(|err| StorageError::other(format!("cannot open {url}: {err}")))?;
            if in_use && !force {
                return Err(ImportError::InUse(format!("a server is using {url}")));
            }
            let waiting = if force { 5_000 } else { 0 };
            let mut conn = sqlite_file::open(path, waiting)
                .map_err(|reason| StorageError::other(format!("cannot open {url}: {reason}")))?;
            let begin = if force {
                "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; BEGIN IMMEDIATE;"
            } else {
                "PRAGMA locking_mode = EXCLUSIVE; PRAGMA foreign_keys = ON; \
                 PRAGMA synchronous = FULL; BEGIN EXCLUSIVE;"
            };
            match diesel::connection::SimpleConnection::batch_execute(&mut conn, begin) {
                Ok(()) => Ok(AnyConnection::Sqlite(conn)),
                Err(err) if !force && err.to_string().contains("locked") => {
                    Err(ImportError::InUse(format!("a server is using {url}")))
                }
                Err(err) => Err(failed(err)),
            }
        }
        _ => {
            let mut conn = connect::open(url, settings)?;
            let others = connect::number(
                &mut conn,
                "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
            )
            .map_err(&failed)?;
            if others > 0 && !force {
                return Err(ImportError::InUse(format!(
                    "{others} other sessions are connected to {url}"
                )));
            }
            migrations::run_pending(&mut conn).map_err(|err| ImportError::Query {
                database: url.to_string(),
                reason: url.scrub(&format!("migrating it failed: {err}")),
            })?;
            connect::run(&mut conn, "BEGIN").map_err(failed)?;
            Ok(conn)
        }
    }
}

/// Empties the target (or refuses to), then reads every row line and the end line.
fn import_rows(
    conn: &mut AnyConnection,
    url: &DatabaseUrl,
    options: &ImportOptions<'_>,
    lines: &mut Lines<'_>,
) -> Result<BTreeMap<String, u64>, ImportError> {
    let failed = query_failed(url);
    let dialect = connect::dialect(conn);
    prepare_target(conn, url, options.force)?;
    let mut batch = Batch::default();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut current = 0;
    loop {
        let Some(line) = lines.next()? else {
            return Err(ImportError::Truncated(lines.number));
        };
        let value: Value = serde_json::from_str(&line).map_err(|_| lines.bad("not JSON"))?;
        if value.get("end").is_some() {
            let end: EndLine = serde_json::from_value(value)
                .map_err(|_| lines.bad("an end line without its counts"))?;
            batch.flush(conn, dialect)?;
            check_counts(&end, &counts)?;
            for table in TABLES.iter().filter(|table| table.has_sequence) {
                let value = end.end.sequences.get(table.name).copied().unwrap_or(0);
                connect::run(conn, &sql_text::move_sequence(dialect, table, value))
                    .map_err(&failed)?;
            }
            if lines.next()?.is_some() {
                return Err(lines.bad("a line after the end line"));
            }
            return Ok(counts);
        }
        let (index, table, row) = row_of(value).map_err(|reason| lines.bad(reason))?;
        if index < current {
            return Err(lines.bad(format!(
                "a row of {} after the rows of later tables",
                table.name
            )));
        }
        if index != current || batch.is_full() {
            batch.flush(conn, dialect)?;
        }
        current = index;
        batch.push(table, row, lines.number);
        *counts.entry(table.name.to_owned()).or_default() += 1;
    }
}

fn check_counts(end: &EndLine, counts: &BTreeMap<String, u64>) -> Result<(), ImportError> {
    for table in TABLES {
        let expected = end.end.rows.get(table.name).copied().unwrap_or(0);
        let found = counts.get(table.name).copied().unwrap_or(0);
        if expected != found {
            return Err(ImportError::CountMismatch {
                table: table.name.to_owned(),
                expected,
                found,
            });
        }
    }
    Ok(())
}

/// Refuses a target with rows in it, or (`force`) empties it.
fn prepare_target(
    conn: &mut AnyConnection,
    url: &DatabaseUrl,
    force: bool,
) -> Result<(), ImportError> {
    let failed = query_failed(url);
    // Children before parents: retry records and orders name keys and pets.
    let filled: Vec<&str> = tables::EMPTIED_FIRST
        .iter()
        .copied()
        .chain(
            TABLES
                .iter()
                .map(|table| table.name)
                .filter(|name| !tables::EMPTIED_FIRST.contains(name)),
        )
        .collect();
    for name in filled {
        if force {
            connect::run(conn, &format!("DELETE FROM {name}")).map_err(&failed)?;
            continue;
        }
        let rows = connect::number(
            conn,
            &format!("SELECT COUNT(*) AS n FROM (SELECT 1 FROM {name} LIMIT 1) AS sample"),
        )
        .map_err(&failed)?;
        if rows > 0 {
            return Err(ImportError::NotEmpty(url.to_string()));
        }
    }
    Ok(())
}

/// The table and row of a row line, checked against the table's columns.
fn row_of(value: Value) -> Result<(usize, &'static Table, Map<String, Value>), String> {
    let Value::Object(mut line) = value else {
        return Err("not a JSON object".into());
    };
    let name = match line.remove("table") {
        Some(Value::String(name)) => name,
        _ => return Err("neither a row (no `table`) nor the end line".into()),
    };
    let (index, table) =
        tables::named(&name).ok_or_else(|| format!("a row of {name:?}, which is no table here"))?;
    let Some(Value::Object(row)) = line.remove("row") else {
        return Err(format!("a row of {name} without its `row` object"));
    };
    for column in table.columns {
        let fits = match (row.get(column.name), column.kind) {
            (None, _) => return Err(format!("a row of {name} without {}", column.name)),
            (Some(Value::Null), _) => true,
            (Some(Value::Number(number)), Kind::Integer) => number.is_i64(),
            (Some(Value::String(_)), Kind::Text) => true,
            (Some(Value::String(hex)), Kind::Bytes) => {
                hex.len() % 2 == 0 && hex.bytes().all(|b| b.is_ascii_hexdigit())
            }
            _ => false,
        };
        if !fits {
            return Err(format!(
                "{name}.{} is not of its column's type",
                column.name
            ));
        }
    }
    if row.len() != table.columns.len() {
        let unknown = row
            .keys()
            .find(|key| !table.columns.iter().any(|column| column.name == *key))
            .cloned()
            .unwrap_or_default();
        return Err(format!(
            "a row of {name} with the column {unknown:?}, which is not here"
        ));
    }
    Ok((index, table, row))
}

/// Rows of one table waiting to be inserted, as one JSON array.
#[derive(Default)]
struct Batch {
    table: Option<&'static Table>,
    json: String,
    rows: usize,
    first_line: u64,
    last_line: u64,
}

impl Batch {
    fn is_full(&self) -> bool {
        self.rows >= BATCH
    }

    fn push(&mut self, table: &'static Table, row: Map<String, Value>, line: u64) {
        if self.rows == 0 {
            self.table = Some(table);
            self.json.push('[');
            self.first_line = line;
        } else {
            self.json.push(',');
        }
        self.json.push_str(&Value::Object(row).to_string());
        self.rows += 1;
        self.last_line = line;
    }

    fn flush(&mut self, conn: &mut AnyConnection, dialect: Dialect) -> Result<(), ImportError> {
        let Some(table) = self.table.take() else {
            return Ok(());
        };
        self.json.push(']');
        let query = diesel::sql_query(sql_text::insert_batch(dialect, table))
            .bind::<Text, _>(std::mem::take(&mut self.json));
        let inserted: QueryResult<usize> = on_connection!(conn, |c| query.execute(c));
        let rows = std::mem::take(&mut self.rows);
        match inserted {
            Ok(count) if count == rows => Ok(()),
            Ok(count) => Err(ImportError::Refused {
                first: self.first_line,
                last: self.last_line,
                reason: format!("{count} of {rows} rows were stored"),
            }),
            Err(err) => Err(ImportError::Refused {
                first: self.first_line,
                last: self.last_line,
                reason: err.to_string(),
            }),
        }
    }
}
