//! `backup`: a consistent copy of a SQLite database while servers read and write it. One
//! `VACUUM INTO` copies the snapshot of one read transaction (a reader, so writers carry on; a
//! stepped backup API would start over at every write and never finish under load) into a
//! private temporary file beside the target. The copy is stamped (`backup_stamp.rs`), turned to
//! a self-contained rollback-journal file, checked with `PRAGMA integrity_check`, flushed, and
//! only then renamed to the target: the target is either the previous file or a whole backup.

use std::path::{Path, PathBuf};

use diesel::connection::SimpleConnection as _;
use diesel::prelude::*;
use diesel::sql_types::Text;

use super::backup_stamp::{self, BackupStamp};
use super::sqlite_file::{self, Staged};

/// How long the copy waits for a lock (a migration running, a file being turned to WAL).
const BUSY_TIMEOUT_MS: u32 = 5_000;

/// Why a backup was not written; the target is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("there is no database at {0}")]
    NoDatabase(PathBuf),
    #[error("{0} is not a petstore database (it has no migrations applied)")]
    NotPetstore(PathBuf),
    #[error("{0} is the database itself (or one of its files); back it up to another file")]
    OntoDatabase(PathBuf),
    #[error("cannot write the backup beside {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the copy of {database} failed: {reason}")]
    Copy { database: PathBuf, reason: String },
    #[error("the copy failed its integrity check ({0}); nothing was written")]
    Integrity(String),
}

/// A backup just written.
#[derive(Debug, Clone)]
pub struct BackupReport {
    pub stamp: BackupStamp,
    /// The backup's size in bytes.
    pub bytes: u64,
}

/// Copies the SQLite database at `source` to `target`, stamped with `key_id`. Blocking.
pub fn backup_sqlite(
    source: &Path,
    target: &Path,
    key_id: &str,
) -> Result<BackupReport, BackupError> {
    if !source.is_file() {
        return Err(BackupError::NoDatabase(source.to_owned()));
    }
    if is_one_of_the_databases_files(source, target) {
        return Err(BackupError::OntoDatabase(target.to_owned()));
    }
    let write_error = |source: std::io::Error| BackupError::Write {
        path: target.to_owned(),
        source,
    };
    let staged = Staged::new(sqlite_file::staging_path(target, "backup"));
    // Created private and empty first, which `VACUUM INTO` accepts: the copy is never readable
    // by others, not even for a moment.
    sqlite_file::create_private(staged.path()).map_err(write_error)?;
    copy_into(source, staged.path())?;
    let stamp = finish_copy(source, staged.path(), key_id)?;
    sqlite_file::sync_file(staged.path()).map_err(write_error)?;
    std::fs::rename(staged.path(), target).map_err(write_error)?;
    staged.keep();
    sqlite_file::sync_parent(target).map_err(write_error)?;
    let bytes = std::fs::metadata(target).map_err(write_error)?.len();
    Ok(BackupReport { stamp, bytes })
}

/// Whether `target` names the database at `source` or its `-wal`, `-shm` or `-journal`, by
/// another spelling too (renaming a backup there would replace the live database).
fn is_one_of_the_databases_files(source: &Path, target: &Path) -> bool {
    let canonical = |path: &Path| -> Option<PathBuf> {
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        Some(parent.canonicalize().ok()?.join(path.file_name()?))
    };
    let (Some(source), Some(target)) = (canonical(source), canonical(target)) else {
        return false;
    };
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .any(|suffix| sqlite_file::with_suffix(&source, suffix) == target)
}

fn copy_into(source: &Path, copy: &Path) -> Result<(), BackupError> {
    let failed = |reason: String| BackupError::Copy {
        database: source.to_owned(),
        reason,
    };
    let mut conn = sqlite_file::open(source, BUSY_TIMEOUT_MS).map_err(failed)?;
    let copy_path = copy
        .to_str()
        .ok_or_else(|| failed(format!("the path {} is not valid UTF-8", copy.display())))?;
    if sqlite_file::applied_versions(&mut conn)
        .map_err(|err| failed(err.to_string()))?
        .is_empty()
    {
        return Err(BackupError::NotPetstore(source.to_owned()));
    }
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(copy_path)
        .execute(&mut conn)
        .map_err(|err| failed(err.to_string()))?;
    Ok(())
}

/// Stamps the copy, makes it one self-contained file and checks it.
fn finish_copy(source: &Path, copy: &Path, key_id: &str) -> Result<BackupStamp, BackupError> {
    let failed = |reason: String| BackupError::Copy {
        database: source.to_owned(),
        reason,
    };
    let mut conn = sqlite_file::open(copy, BUSY_TIMEOUT_MS).map_err(failed)?;
    conn.batch_execute("PRAGMA journal_mode = DELETE;")
        .map_err(|err| failed(err.to_string()))?;
    let schema_version = sqlite_file::applied_versions(&mut conn)
        .map_err(|err| failed(err.to_string()))?
        .pop()
        .unwrap_or_default();
    let stamp = BackupStamp {
        schema_version,
        key_id: key_id.to_owned(),
        taken_at: sqlite_file::unix_now(),
    };
    backup_stamp::write(&mut conn, &stamp).map_err(|err| failed(err.to_string()))?;
    if let Some(problems) =
        sqlite_file::integrity_problems(&mut conn).map_err(|err| failed(err.to_string()))?
    {
        return Err(BackupError::Integrity(problems));
    }
    Ok(stamp)
}
