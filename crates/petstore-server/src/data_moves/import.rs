//! `petstore import --from FILE|-`: an export read into the configured database, in one
//! transaction.

use std::io::BufReader;

use super::{configured_key_id, is_standard_stream, DataMoveError, ImportArgs};
use crate::AppError;
use petstore_persistence::ImportOptions;

pub fn import(args: ImportArgs) -> Result<(), AppError> {
    let url = args.storage.database_url()?;
    args.storage.create_default_data_dir()?;
    let key_id = configured_key_id(&args.keys, &args.storage)?;
    let settings = args.storage.pool_settings();
    let options = ImportOptions {
        key_id: &key_id,
        accept_other_key_id: args.force_key_id,
        force: args.force,
    };
    let started = std::time::Instant::now();
    let summary = if is_standard_stream(&args.from) {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        petstore_persistence::import(&url, &settings, &options, &mut input)
    } else {
        let file = std::fs::File::open(&args.from).map_err(|source| DataMoveError::File {
            action: "read",
            path: args.from.clone(),
            source,
        })?;
        petstore_persistence::import(&url, &settings, &options, &mut BufReader::new(file))
    }
    .map_err(DataMoveError::from)?;
    let rows: Vec<String> = summary
        .rows
        .iter()
        .map(|(table, count)| format!("{count} {table}"))
        .collect();
    eprintln!(
        "imported {} into {url} in {:.1?}",
        rows.join(", "),
        started.elapsed()
    );
    eprintln!(
        "its keys work only with the same PETSTORE_KEY_SECRET (key id {}); restart the servers \
         on this database if any ran during the import",
        summary.header.key_id
    );
    Ok(())
}
