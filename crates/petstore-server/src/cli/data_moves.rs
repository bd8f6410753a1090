//! The settings of `petstore backup`, `restore`, `export` and `import` (`crate::data_moves`).

use std::path::PathBuf;

use clap::Args;

use super::{KeySecretArgs, StorageArgs};

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
