//! `petstore backup`, `restore`, `export` and `import`: keeping the data and moving it between
//! databases. The SQL is `petstore-persistence`'s; here are the commands' settings, the files
//! and streams they read and write, and what they tell the operator (on stderr: stdout may be
//! the export itself).

mod backup;
mod backup_dir;
mod export;
mod import;
mod restore;
mod schedule;

pub use backup::backup;
pub use export::export;
pub use import::import;
pub use restore::restore;

use std::path::PathBuf;
use std::time::SystemTime;

use petstore_persistence::{BackupError, ExportError, ImportError, RestoreError};
use secrecy::ExposeSecret as _;

pub use crate::cli::data_moves::{BackupArgs, ExportArgs, ImportArgs, RestoreArgs};
use crate::cli::{KeySecretArgs, StorageArgs};
use crate::{key_secret, AppError};

/// Why a backup, restore, export or import did nothing.
#[derive(Debug, thiserror::Error)]
pub enum DataMoveError {
    #[error(transparent)]
    Backup(#[from] BackupError),
    #[error(transparent)]
    Restore(#[from] RestoreError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("cannot {action} {path}: {source}")]
    File {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the backup schedule: {0}")]
    Schedule(#[source] std::io::Error),
}

/// The key id (`kid`) of the configured current key secret.
fn configured_key_id(keys: &KeySecretArgs, storage: &StorageArgs) -> Result<String, AppError> {
    let secrets = key_secret::resolve(keys, &storage.data_dir)?;
    Ok(petstore_http::security::auth::key_id(
        secrets.current.expose_secret(),
    ))
}

/// `-` names standard input or output.
fn is_standard_stream(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// `20261127T040500Z`: a UTC second that sorts by time and needs no quoting in a shell.
fn utc_label(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect()
}
