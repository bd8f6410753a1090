//! The settings of `petstore backup`, `restore`, `export` and `import` (`crate::data_moves`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};

use super::{KeySecretArgs, StorageArgs};
use crate::durations::at_least_a_second;

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["to", "to_dir"])))]
pub struct BackupArgs {
    /// Where to write the backup (a SQLite file, mode 0600); replaced atomically if it exists.
    #[arg(long, value_name = "FILE", conflicts_with = "every")]
    pub to: Option<PathBuf>,

    /// Write the backup into DIR instead, named by the UTC time it was taken
    /// (`petstore-20261127T040500Z.db`), then remove all but the newest `--keep` there.
    #[arg(long, value_name = "DIR")]
    pub to_dir: Option<PathBuf>,

    /// With `--to-dir`: take a backup now and then every DURATION (`1h`, `15m`; at least `1s`)
    /// until SIGTERM or SIGINT. A failed backup is logged and the next one tried on time.
    #[arg(long, value_name = "DURATION", requires = "to_dir", value_parser = at_least_a_second)]
    pub every: Option<Duration>,

    /// With `--to-dir`: how many backups to keep there, the newest; older ones are removed only
    /// after a new backup succeeded.
    #[arg(long, value_name = "N", requires = "to_dir", default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub keep: u32,

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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    fn backup(extra: &[&str]) -> Result<BackupArgs, clap::Error> {
        let argv = [&["petstore", "backup"][..], extra].concat();
        Cli::try_parse_from(argv).map(|cli| match cli.command {
            Command::Backup(args) => args,
            _ => panic!("parsed as another command"),
        })
    }

    #[test]
    fn a_backup_goes_to_a_file_or_a_directory_and_only_a_directory_is_scheduled() {
        let once = backup(&["--to", "b.db"]).unwrap();
        assert_eq!(once.to, Some(PathBuf::from("b.db")));
        assert_eq!((once.to_dir, once.every), (None, None));

        let scheduled = backup(&["--to-dir", "backups", "--every", "1h", "--keep", "3"]).unwrap();
        assert_eq!(scheduled.to_dir, Some(PathBuf::from("backups")));
        assert_eq!(scheduled.every, Some(Duration::from_secs(3600)));
        assert_eq!(scheduled.keep, 3);
        assert_eq!(backup(&["--to-dir", "backups"]).unwrap().keep, 24);

        for (args, expected) in [
            (&[][..], "--to"),
            (
                &["--to", "b.db", "--to-dir", "backups"][..],
                "cannot be used with",
            ),
            (
                &["--to", "b.db", "--every", "1h"][..],
                "cannot be used with",
            ),
            (&["--every", "1h"][..], "--to-dir"),
            (&["--keep", "3"][..], "--to-dir"),
        ] {
            let err = backup(args).unwrap_err();
            assert!(err.to_string().contains(expected), "{args:?}: {err}");
        }
    }

    #[test]
    fn a_schedule_needs_a_second_between_backups_and_keeps_at_least_one() {
        for (args, expected) in [
            (["--every", "500ms"], "at least 1s"),
            (["--every", "60"], "unit"),
            (["--keep", "0"], "--keep"),
        ] {
            let argv = [&["--to-dir", "backups"][..], &args[..]].concat();
            let err = backup(&argv).unwrap_err();
            assert!(err.to_string().contains(expected), "{args:?}: {err}");
        }
    }

    #[test]
    fn the_kubernetes_backup_sidecar_runs_a_schedule_this_binary_accepts() {
        let manifest = include_str!("../../../../deploy/kubernetes-sqlite/deployment-sqlite.yaml");
        let args: Vec<&str> = manifest
            .lines()
            .skip_while(|line| line.trim() != "args:")
            .skip(1)
            .map_while(|line| line.trim().strip_prefix("- "))
            .collect();
        assert_eq!(args.first(), Some(&"backup"), "{args:?}");
        let sidecar = backup(&args[1..]).unwrap();
        assert_eq!(sidecar.to_dir, Some(PathBuf::from("/backups")));
        assert_eq!(sidecar.every, Some(Duration::from_secs(3600)));
        assert_eq!(sidecar.keep, 48);
    }
}
