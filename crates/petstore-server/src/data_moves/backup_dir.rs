//! A directory of backups, each named by the UTC second it was taken
//! (`petstore-20261127T040500Z.db`) so that the names sort by age: one more backup taken, then
//! all but the newest few removed. Files of other names in the directory are left alone.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::{utc_label, DataMoveError};

const PREFIX: &str = "petstore-";
const SUFFIX: &str = ".db";

/// Where backups of one database go and how many of them stay.
#[derive(Debug)]
pub(super) struct BackupDir {
    database: PathBuf,
    dir: PathBuf,
    key_id: String,
    keep: usize,
}

impl BackupDir {
    /// Backups of the SQLite database at `database`, stamped with `key_id`, in `dir`, of which
    /// the newest `keep` (at least one) are kept.
    pub(super) fn new(database: PathBuf, dir: PathBuf, key_id: String, keep: usize) -> Self {
        Self {
            database,
            dir,
            key_id,
            keep: keep.max(1),
        }
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(super) fn keep(&self) -> usize {
        self.keep
    }

    /// Takes a backup and then removes the oldest beyond `keep`, logging both. A failed backup
    /// removes nothing; a removal that fails is logged and leaves the backup taken.
    pub(super) fn take_logged(&self) -> Result<(), DataMoveError> {
        let started = Instant::now();
        let file = self.dir.join(backup_name(SystemTime::now()));
        let report = match petstore_persistence::backup_sqlite(&self.database, &file, &self.key_id)
        {
            Ok(report) => report,
            Err(error) => {
                let error = DataMoveError::from(error);
                tracing::error!(
                    database = %self.database.display(),
                    dir = %self.dir.display(),
                    %error,
                    "backup failed; nothing was removed"
                );
                return Err(error);
            }
        };
        tracing::info!(
            database = %self.database.display(),
            file = %file.display(),
            bytes = report.bytes,
            schema_version = %report.stamp.schema_version,
            key_id = %report.stamp.key_id,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "backup written; it passed its integrity check"
        );
        match self.remove_beyond_keep() {
            Ok(removed) => {
                for file in removed {
                    tracing::info!(file = %file.display(), keep = self.keep, "removed an old backup");
                }
            }
            Err(error) => tracing::warn!(
                dir = %self.dir.display(),
                %error,
                "removing old backups failed; the next backup tries again"
            ),
        }
        Ok(())
    }

    /// Logs the backups the directory holds, oldest first: where an operator whose image has
    /// no shell to list them finds the name to restore.
    pub(super) fn log_kept(&self) {
        match self.backup_names() {
            Ok(names) => tracing::info!(
                dir = %self.dir.display(),
                count = names.len(),
                files = %names.join(", "),
                "backups kept"
            ),
            Err(error) => tracing::warn!(%error, "cannot list the backups kept"),
        }
    }

    /// The names of the backups in the directory, oldest first.
    fn backup_names(&self) -> Result<Vec<String>, DataMoveError> {
        let listing_failed = |source| DataMoveError::File {
            action: "list",
            path: self.dir.clone(),
            source,
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(listing_failed)? {
            let name = entry.map_err(listing_failed)?.file_name();
            if let Some(name) = name.to_str().filter(|name| is_backup_name(name)) {
                names.push(name.to_owned());
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    /// Removes the backups beyond the newest `keep` and says which.
    fn remove_beyond_keep(&self) -> Result<Vec<PathBuf>, DataMoveError> {
        let mut removed = Vec::new();
        for name in beyond_keep(self.backup_names()?, self.keep) {
            let path = self.dir.join(name);
            std::fs::remove_file(&path).map_err(|source| DataMoveError::File {
                action: "remove",
                path: path.clone(),
                source,
            })?;
            removed.push(path);
        }
        Ok(removed)
    }
}

/// The name of a backup taken at `at`.
fn backup_name(at: SystemTime) -> String {
    format!("{PREFIX}{}{SUFFIX}", utc_label(at))
}

/// Whether `name` is one [`backup_name`] gives: `petstore-YYYYMMDDTHHMMSSZ.db`.
fn is_backup_name(name: &str) -> bool {
    let Some(label) = name
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    else {
        return false;
    };
    let bytes = label.as_bytes();
    bytes.len() == 16
        && bytes[8] == b'T'
        && bytes[15] == b'Z'
        && bytes[..8].iter().all(u8::is_ascii_digit)
        && bytes[9..15].iter().all(u8::is_ascii_digit)
}

/// The backup names to remove so that the newest `keep` stay: all but the last `keep` in order.
fn beyond_keep(mut names: Vec<String>, keep: usize) -> Vec<String> {
    names.sort_unstable();
    let beyond = names.len().saturating_sub(keep);
    names.truncate(beyond);
    names
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn a_backup_is_named_by_its_utc_second_and_the_name_is_recognised() {
        let at = UNIX_EPOCH + Duration::from_secs(1_795_752_300);
        let name = backup_name(at);
        assert_eq!(name, "petstore-20261127T040500Z.db");
        assert!(is_backup_name(&name));
        let later = backup_name(at + Duration::from_secs(1));
        assert!(later > name, "names sort by time: {later} after {name}");
    }

    #[test]
    fn only_backup_names_are_recognised() {
        for other in [
            "petstore.db",
            "petstore-20261126T040500Z.db-wal",
            "petstore-20261126T040500Z.db.backup-1-2",
            ".petstore-20261126T040500Z.db.backup-1-2",
            "petstore-2026112T0405000Z.db",
            "petstore-20261126T040500.db",
            "petstore-20261126x040500Z.db",
            "other-20261126T040500Z.db",
            "notes.txt",
        ] {
            assert!(!is_backup_name(other), "{other}");
        }
    }

    #[test]
    fn the_oldest_beyond_keep_are_removed_and_the_newest_stay() {
        let names =
            |list: &[&str]| -> Vec<String> { list.iter().map(|name| (*name).to_owned()).collect() };
        let taken = names(&[
            "petstore-20261126T050000Z.db",
            "petstore-20261126T030000Z.db",
            "petstore-20261126T040000Z.db",
        ]);
        assert_eq!(
            beyond_keep(taken.clone(), 2),
            names(&["petstore-20261126T030000Z.db"])
        );
        assert_eq!(
            beyond_keep(taken.clone(), 1),
            names(&[
                "petstore-20261126T030000Z.db",
                "petstore-20261126T040000Z.db"
            ])
        );
        assert!(beyond_keep(taken, 3).is_empty());
    }
}
