//! `petstore backup --to FILE`: an online copy of a SQLite database, stamped with its schema
//! version and the key id of the configured secret. PostgreSQL is backed up with its own tools.

use petstore_persistence::DatabaseUrl;

use super::{configured_key_id, BackupArgs, DataMoveError};
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
    let started = std::time::Instant::now();
    let report = petstore_persistence::backup_sqlite(&path, &args.to, &key_id)
        .map_err(DataMoveError::from)?;
    eprintln!(
        "backed up {url} to {} ({} bytes, migration {}, key id {}) in {:.1?}; it passed its \
         integrity check",
        args.to.display(),
        report.bytes,
        report.stamp.schema_version,
        report.stamp.key_id,
        started.elapsed()
    );
    Ok(())
}
