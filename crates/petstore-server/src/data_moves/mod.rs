//! `petstore backup`, `restore`, `export` and `import`: keeping the data and moving it between
//! databases. The SQL is `petstore-persistence`'s; here are the commands' settings, the files
//! and streams they read and write, and what they tell the operator (on stderr: stdout may be
//! the export itself).

mod backup;
mod export;
mod import;
mod restore;

pub use backup::backup;
pub use export::export;
pub use import::import;
pub use restore::restore;

use std::path::PathBuf;

use clap::Args;
use petstore_persistence::{BackupError, ExportError, ImportError, RestoreError};
use secrecy::ExposeSecret as _;

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
}

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Where to write the backup (a SQLite file, mode 0600); replaced atomically if it exists.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup to restore (written by `petstore backup`).
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,

    /// Restore a backup whose keys another secret signed (or that does not say): its keys will
    /// not work with the configured one.
    #[arg(long)]
    pub force_key_id: bool,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Where to write the export (JSON Lines, mode 0600), or `-` for standard output.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The export to read (written by `petstore export`), or `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,

    /// Import into a database that has rows (they are replaced: pets, categories, orders, keys
    /// and retry records) or that a server is using.
    #[arg(long)]
    pub force: bool,

    /// Import an export whose keys another secret signed: its keys will not work with the
    /// configured one.
    #[arg(long)]
    pub force_key_id: bool,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,
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
