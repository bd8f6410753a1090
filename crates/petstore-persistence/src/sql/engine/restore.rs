//! `restore`: puts a backup in the place of a SQLite database that no server is using.
//!
//! The backup is copied beside the target first and everything is checked on that copy: its
//! integrity, that it is a petstore database, that no migration in it is unknown to this binary,
//! and its stamp's key id against the configured secret's. Older ones are migrated forward.
//!
//! Whether a server uses the target is asked of the file's locks: a connection open in WAL
//! mode anywhere holds a lock on its `-shm` file (`in_use.rs`). Then an exclusive lock on the
//! database, taken without waiting (`locking_mode=EXCLUSIVE`, `BEGIN EXCLUSIVE` with
//! `busy_timeout=0`), is held through the swap: the old file is turned to a rollback-journal
//! file (which folds its WAL into it), renamed to `NAME.replaced-WHEN` with its `-shm`, and the
//! checked copy is renamed into place.

use std::path::{Path, PathBuf};

use diesel::connection::SimpleConnection as _;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::SqliteConnection;

use super::backup_stamp::{self, BackupStamp};
use super::connection::AnyConnection;
use super::migrations;
use super::sqlite_file::{self, Staged};

/// Why nothing was restored; the target is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("there is no backup at {0}")]
    NoBackup(PathBuf),
    #[error("{path} is not a SQLite database: {reason}")]
    NotADatabase { path: PathBuf, reason: String },
    #[error("{path} failed its integrity check: {problems}")]
    Corrupt { path: PathBuf, problems: String },
    #[error("{0} is not a petstore database (it has no migrations applied)")]
    NotPetstore(PathBuf),
    #[error(
        "{path} was made by a newer petstore: it has the migration {version}, which this binary \
         does not know; restore it with that release or a later one"
    )]
    Newer { path: PathBuf, version: String },
    #[error(
        "{path} holds keys signed with the secret whose key id is {file}, but the configured \
         PETSTORE_KEY_SECRET has the key id {configured}: none of its keys would work. Configure \
         the secret it was taken with, or pass --force-key-id to restore it anyway"
    )]
    KeyIdMismatch {
        path: PathBuf,
        file: String,
        configured: String,
    },
    #[error(
        "{0} does not say which secret signed its keys (it was not written by `petstore \
         backup`); pass --force-key-id to restore it anyway"
    )]
    Unstamped(PathBuf),
    #[error(
        "a server is using {0}: stop every `petstore serve` on it (and anything else holding it \
         open), then restore"
    )]
    InUse(PathBuf),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("restoring into {path} failed: {reason}")]
    Failed { path: PathBuf, reason: String },
}

/// A restore just done.
#[derive(Debug, Clone)]
pub struct RestoreReport {
    /// The backup's stamp (`None` for an unstamped file restored with `--force-key-id`).
    pub stamp: Option<BackupStamp>,
    /// The migrations applied to bring the backup up to this binary.
    pub migrated: Vec<String>,
    /// Where the database it replaced was kept, if there was one.
    pub replaced: Option<PathBuf>,
}

/// What a restore checks the backup against.
#[derive(Debug, Clone)]
pub struct RestoreChecks<'a> {
    /// The key id of the configured secret.
    pub key_id: &'a str,
    /// Restore a file stamped with another key id, or with none.
    pub accept_other_key_id: bool,
    /// Appended to the replaced database's name: `NAME.replaced-LABEL`.
    pub replaced_label: &'a str,
}

/// Replaces the SQLite database at `target` with the backup at `from`. Blocking.
pub fn restore_sqlite(
    from: &Path,
    target: &Path,
    checks: &RestoreChecks<'_>,
) -> Result<RestoreReport, RestoreError> {
    if !from.is_file() {
        return Err(RestoreError::NoBackup(from.to_owned()));
    }
    let staged = Staged::new(sqlite_file::staging_path(target, "restore"));
    stage_copy(from, staged.path())?;
    let (stamp, migrated) = prepare(from, staged.path(), checks)?;
    sqlite_file::sync_file(staged.path()).map_err(io("flush", staged.path()))?;
    let replaced = swap_in(&staged, target, checks.replaced_label)?;
    staged.keep();
    Ok(RestoreReport {
        stamp,
        migrated,
        replaced,
    })
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RestoreError {
    let path = path.to_owned();
    move |source| RestoreError::Io {
        action,
        path,
        source,
    }
}

fn stage_copy(from: &Path, staged: &Path) -> Result<(), RestoreError> {
    let mut source = std::fs::File::open(from).map_err(io("read", from))?;
    let mut copy = sqlite_file::create_private(staged).map_err(io("write beside", staged))?;
    std::io::copy(&mut source, &mut copy).map_err(io("copy", from))?;
    Ok(())
}

/// Checks the staged copy, migrates it forward and removes its stamp.
fn prepare(
    from: &Path,
    staged: &Path,
    checks: &RestoreChecks<'_>,
) -> Result<(Option<BackupStamp>, Vec<String>), RestoreError> {
    let not_a_database = |reason: String| RestoreError::NotADatabase {
        path: from.to_owned(),
        reason,
    };
    let mut conn = sqlite_file::open(staged, 0).map_err(not_a_database)?;
    let problems = sqlite_file::integrity_problems(&mut conn)
        .map_err(|err| not_a_database(err.to_string()))?;
    if let Some(problems) = problems {
        return Err(RestoreError::Corrupt {
            path: from.to_owned(),
            problems,
        });
    }
    let failed = |err: diesel::result::Error| RestoreError::Failed {
        path: from.to_owned(),
        reason: err.to_string(),
    };
    let applied = sqlite_file::applied_versions(&mut conn).map_err(failed)?;
    if applied.is_empty() || !sqlite_file::has_table(&mut conn, "pets").map_err(failed)? {
        return Err(RestoreError::NotPetstore(from.to_owned()));
    }
    let known = migrations::known_versions();
    if let Some(version) = applied.iter().find(|version| !known.contains(version)) {
        return Err(RestoreError::Newer {
            path: from.to_owned(),
            version: version.clone(),
        });
    }
    let stamp = backup_stamp::read(&mut conn).map_err(failed)?;
    match &stamp {
        Some(stamp) if stamp.key_id != checks.key_id && !checks.accept_other_key_id => {
            return Err(RestoreError::KeyIdMismatch {
                path: from.to_owned(),
                file: stamp.key_id.clone(),
                configured: checks.key_id.to_owned(),
            })
        }
        None if !checks.accept_other_key_id => {
            return Err(RestoreError::Unstamped(from.to_owned()))
        }
        _ => {}
    }
    backup_stamp::remove(&mut conn).map_err(failed)?;
    conn.batch_execute("PRAGMA journal_mode = DELETE; PRAGMA foreign_keys = ON;")
        .map_err(failed)?;
    let mut any = AnyConnection::Sqlite(conn);
    let migrated = migrations::run_pending(&mut any).map_err(|err| RestoreError::Failed {
        path: from.to_owned(),
        reason: format!("migrating it forward failed: {err}"),
    })?;
    Ok((stamp, migrated))
}

#[derive(QueryableByName)]
struct JournalMode {
    #[diesel(sql_type = Text)]
    journal_mode: String,
}

/// Takes the target's file lock without waiting and turns it into one self-contained file; the
/// returned connection holds the lock until dropped.
fn lock_unused(target: &Path) -> Result<SqliteConnection, RestoreError> {
    let failed = |reason: String| RestoreError::Failed {
        path: target.to_owned(),
        reason,
    };
    if super::in_use::is_open_elsewhere(target).map_err(|err| failed(err.to_string()))? {
        return Err(RestoreError::InUse(target.to_owned()));
    }
    let mut conn = sqlite_file::open(target, 0).map_err(failed)?;
    let locked = conn.batch_execute("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;");
    match locked {
        Ok(()) => {}
        Err(err) if is_busy(&err) => return Err(RestoreError::InUse(target.to_owned())),
        Err(err) => return Err(failed(err.to_string())),
    }
    let mode = diesel::sql_query("PRAGMA journal_mode = DELETE")
        .get_result::<JournalMode>(&mut conn)
        .map_err(|err| failed(err.to_string()))?;
    if !mode.journal_mode.eq_ignore_ascii_case("delete") {
        return Err(RestoreError::InUse(target.to_owned()));
    }
    Ok(conn)
}

fn is_busy(error: &diesel::result::Error) -> bool {
    let message = error.to_string();
    message.contains("locked") || message.contains("busy")
}

/// Moves the target (if any) aside and the staged copy into its place, under the target's lock.
fn swap_in(staged: &Staged, target: &Path, label: &str) -> Result<Option<PathBuf>, RestoreError> {
    let lock = if target.exists() {
        Some(lock_unused(target)?)
    } else {
        None
    };
    let name = target
        .file_name()
        .map_or_else(|| "petstore.db".into(), |name| name.to_string_lossy());
    let replaced = target.with_file_name(format!("{name}.replaced-{label}"));
    if lock.is_some() {
        std::fs::rename(target, &replaced).map_err(io("move aside", target))?;
    }
    // Whatever `-wal` and `-shm` files sit beside the target belong to the old database; beside
    // the new one they would be read as its own.
    for suffix in ["-wal", "-shm", "-journal"] {
        let beside = sqlite_file::with_suffix(target, suffix);
        if beside.exists() {
            let aside = sqlite_file::with_suffix(&replaced, suffix);
            std::fs::rename(&beside, &aside).map_err(io("move aside", &beside))?;
        }
    }
    if let Err(err) = std::fs::rename(staged.path(), target) {
        if lock.is_some() {
            let _ = std::fs::rename(&replaced, target);
        }
        return Err(io("move into place", target)(err));
    }
    sqlite_file::sync_parent(target).map_err(io("flush the directory of", target))?;
    drop(lock);
    Ok(replaced.exists().then_some(replaced))
}
