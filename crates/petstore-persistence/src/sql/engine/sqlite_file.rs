//! What a backup and a restore do to SQLite files of their own, outside any pool: open one,
//! check it, read which migrations it carries, and make a file durable under its final name
//! (private temporary files beside the target, fsync, rename, fsync of the directory).

use std::fs::{File, OpenOptions};
use std::io;
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::SqliteConnection;

/// Opens the SQLite file at `path` (creating it when absent) with `busy_timeout_ms`.
pub(crate) fn open(path: &Path, busy_timeout_ms: u32) -> Result<SqliteConnection, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("the path {} is not valid UTF-8", path.display()))?;
    let mut conn = SqliteConnection::establish(text).map_err(|err| err.to_string())?;
    diesel::connection::SimpleConnection::batch_execute(
        &mut conn,
        &format!("PRAGMA busy_timeout = {busy_timeout_ms};"),
    )
    .map_err(|err| err.to_string())?;
    Ok(conn)
}

#[derive(QueryableByName)]
struct IntegrityLine {
    #[diesel(sql_type = Text)]
    integrity_check: String,
}

/// `PRAGMA integrity_check`: `None` when the file is sound, else the first problems it names.
pub(crate) fn integrity_problems(conn: &mut SqliteConnection) -> QueryResult<Option<String>> {
    let lines = diesel::sql_query("PRAGMA integrity_check(10)").load::<IntegrityLine>(conn)?;
    match lines.as_slice() {
        [only] if only.integrity_check == "ok" => Ok(None),
        _ => Ok(Some(
            lines
                .into_iter()
                .map(|line| line.integrity_check)
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Whether the database has a table called `table`.
pub(crate) fn has_table(conn: &mut SqliteConnection, table: &str) -> QueryResult<bool> {
    let found = diesel::sql_query(
        "SELECT COUNT(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ?",
    )
    .bind::<Text, _>(table)
    .get_result::<Count>(conn)?;
    Ok(found.n > 0)
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

/// The migrations applied to the database, oldest first; empty when it has none (not a
/// petstore database, or a new file).
pub(crate) fn applied_versions(conn: &mut SqliteConnection) -> QueryResult<Vec<String>> {
    if !has_table(conn, "__diesel_schema_migrations")? {
        return Ok(Vec::new());
    }
    let rows = diesel::sql_query("SELECT version FROM __diesel_schema_migrations ORDER BY version")
        .load::<Version>(conn)?;
    Ok(rows.into_iter().map(|row| row.version).collect())
}

/// A name beside `target` for a file on its way there: in the same directory (so the final
/// rename is atomic), hidden, and unique to this process and moment.
pub(crate) fn staging_path(target: &Path, purpose: &str) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "petstore.db".into(), |name| name.to_string_lossy());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    target.with_file_name(format!(".{name}.{purpose}-{}-{nanos}", std::process::id()))
}

/// Creates `path`, which must not exist, readable and writable by its owner only.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path)
}

/// Flushes `path`'s data to the disk.
pub(crate) fn sync_file(path: &Path) -> io::Result<()> {
    OpenOptions::new().write(true).open(path)?.sync_all()
}

/// Flushes the directory holding `path`, so that a rename into it survives a power loss.
pub(crate) fn sync_parent(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}

/// Removes a staging file on every way out unless [`keep`](Self::keep) was called.
pub(crate) struct Staged(Option<PathBuf>);

impl Staged {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self(Some(path))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or_else(|| Path::new(""))
    }

    /// The file reached its final name: nothing to remove.
    pub(crate) fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                let mut name = path.clone().into_os_string();
                name.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(name));
            }
        }
    }
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Seconds since the Unix epoch, now.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}
