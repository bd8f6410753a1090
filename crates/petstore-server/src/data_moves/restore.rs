//! `petstore restore --from FILE`: a backup put in the place of the configured SQLite database
//! while no server uses it; the database it replaces is kept beside it.

use std::time::SystemTime;

use petstore_persistence::{DatabaseUrl, RestoreChecks};

use super::{configured_key_id, utc_label, DataMoveError, RestoreArgs};
use crate::AppError;

pub fn restore(args: RestoreArgs) -> Result<(), AppError> {
    let url = args.storage.database_url()?;
    let path = match &url {
        DatabaseUrl::Sqlite(path) => path.clone(),
        DatabaseUrl::Postgres(_) => {
            return Err(AppError::Usage(
                "`petstore restore` restores SQLite backups; restore PostgreSQL with \
                 `pg_restore` (docs/deployment.md, Backing up, restoring and moving the data)"
                    .to_owned(),
            ))
        }
        DatabaseUrl::Memory => {
            return Err(AppError::Usage(
                "DATABASE_URL=memory: keeps nothing to restore into".to_owned(),
            ))
        }
    };
    args.storage.create_default_data_dir()?;
    let key_id = configured_key_id(&args.keys, &args.storage)?;
    let label = utc_label(SystemTime::now());
    let checks = RestoreChecks {
        key_id: &key_id,
        accept_other_key_id: args.force_key_id,
        replaced_label: &label,
    };
    let report = petstore_persistence::restore_sqlite(&args.from, &path, &checks)
        .map_err(DataMoveError::from)?;
    eprintln!("restored {} into {url}", args.from.display());
    if !report.migrated.is_empty() {
        eprintln!("migrated it forward: {}", report.migrated.join(", "));
    }
    if let Some(replaced) = &report.replaced {
        eprintln!("the database it replaced is kept as {}", replaced.display());
    }
    match &report.stamp {
        Some(stamp) if stamp.key_id == key_id => eprintln!(
            "its keys work only with the same PETSTORE_KEY_SECRET (key id {key_id}), the one \
             configured here"
        ),
        Some(stamp) => eprintln!(
            "its keys work only with the PETSTORE_KEY_SECRET whose key id is {}; the one \
             configured here (key id {key_id}) refuses them",
            stamp.key_id
        ),
        None => eprintln!(
            "its keys work only with the PETSTORE_KEY_SECRET they were issued with, which the \
             file does not name"
        ),
    }
    Ok(())
}
