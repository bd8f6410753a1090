//! `petstore migrate`: applies pending migrations, for deployments that migrate before rolling
//! out new instances. Like `serve`, it waits for a database that is not up yet, up to
//! `PETSTORE_STARTUP_TIMEOUT`, so it may start beside the database (a compose file, a pod).

use crate::cli::StorageArgs;
use crate::storage::with_startup_retry;
use crate::AppError;

pub async fn run(args: StorageArgs) -> Result<(), AppError> {
    let url = args.database_url()?;
    args.create_default_data_dir()?;
    let settings = args.pool_settings();
    let attempt_url = url.clone();
    let applied = with_startup_retry(&args, &url, move || {
        petstore_persistence::migrate(&attempt_url, &settings)
    })
    .await?;
    if applied.is_empty() {
        eprintln!("{url}: already up to date");
    } else {
        eprintln!("{url}: applied {}", applied.join(", "));
    }
    Ok(())
}
