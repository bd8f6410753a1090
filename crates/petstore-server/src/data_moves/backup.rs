//! `petstore backup --to FILE`: an online copy of a SQLite database, stamped with its schema
//! version and the key id of the configured secret. `--to-dir DIR` names the copy by its time
//! and keeps the newest few (`backup_dir.rs`); with `--every` it does so on a schedule
//! (`schedule.rs`). PostgreSQL is backed up with its own tools.

use std::path::Path;

use petstore_persistence::DatabaseUrl;

use super::backup_dir::BackupDir;
use super::{configured_key_id, schedule, BackupArgs, DataMoveError};
use crate::AppError;

pub fn backup(args: BackupArgs) -> Result<(), AppError> {
    let url = args.storage.database_url()?;
    let path = match &url {
        DatabaseUrl::Sqlite(path) => path.clone(),
        DatabaseUrl::Postgres(_) => {
            return Err(AppError::Usage(
                "`petstore backup` copies SQLite databases; back PostgreSQL up with its own \
                 tools: `pg_dump --format=custom` (docs/deployment.md, Backing up, restoring \
                 and moving the data)"
                    .to_owned(),
            ))
        }
        DatabaseUrl::Memory => {
            return Err(AppError::Usage(
                "DATABASE_URL=memory: keeps nothing to back up".to_owned(),
            ))
        }
    };
    let key_id = configured_key_id(&args.keys, &args.storage)?;
    match (args.to, args.to_dir) {
        (Some(to), _) => backup_to_file(&url, &path, &to, &key_id),
        (None, Some(dir)) => {
            let keep = usize::try_from(args.keep).unwrap_or(usize::MAX);
            let backups = BackupDir::new(path, dir, key_id, keep);
            match args.every {
                Some(every) => schedule::run(&backups, every),
                None => Ok(backups.take_logged()?),
            }
        }
        (None, None) => Err(AppError::Usage(
            "say where to write the backup: --to FILE or --to-dir DIR".to_owned(),
        )),
    }
}

fn backup_to_file(
    url: &DatabaseUrl,
    database: &Path,
    to: &Path,
    key_id: &str,
) -> Result<(), AppError> {
    let started = std::time::Instant::now();
    let report =
        petstore_persistence::backup_sqlite(database, to, key_id).map_err(DataMoveError::from)?;
    eprintln!(
        "backed up {url} to {} ({} bytes, migration {}, key id {}) in {:.1?}; it passed its \
         integrity check",
        to.display(),
        report.bytes,
        report.stamp.schema_version,
        report.stamp.key_id,
        started.elapsed()
    );
    Ok(())
}
