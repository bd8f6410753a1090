//! Turns the storage flags into an opened repository: picks the backend from the database URL
//! and keeps retrying an unreachable database for a bounded time at start-up.

use std::time::{Duration, Instant};

use petstore_persistence::{DatabaseUrl, PoolSettings, Storage, StorageError};

use crate::cli::StorageArgs;

const RETRY_PAUSE: Duration = Duration::from_secs(1);

impl StorageArgs {
    /// The configured database URL, or the SQLite file in the data directory.
    pub fn database_url(&self) -> Result<DatabaseUrl, StorageError> {
        match &self.database_url {
            Some(raw) => raw.parse(),
            None => format!("sqlite://{}", self.data_dir.join("petstore.db").display()).parse(),
        }
    }

    /// Creates the data directory when the database is the default SQLite file in it (`serve`
    /// and `migrate` start a new database there). An explicit path's directory is never created.
    pub fn create_default_data_dir(&self) -> Result<(), StorageError> {
        if self.database_url.is_some() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.data_dir).map_err(|error| {
            StorageError::other(format!(
                "cannot create the data directory {}: {error}",
                self.data_dir.display()
            ))
        })
    }

    pub fn pool_settings(&self) -> PoolSettings {
        PoolSettings {
            max_size: self.pool_size,
            checkout_timeout: self.pool_timeout,
            connect_timeout: self.connect_timeout,
            statement_timeout: self.statement_timeout,
            queue_size: usize::try_from(self.queue_size).unwrap_or(usize::MAX),
        }
    }
}

/// Runs `attempt` (blocking) until it succeeds, fails for a reason retrying cannot fix, or
/// `startup_timeout` has passed: `serve` and `migrate` both wait so for a database that is not
/// up yet, each retry a warning. Attempts go on until the timeout itself, the last one at it.
pub async fn with_startup_retry<T, F>(
    args: &StorageArgs,
    url: &DatabaseUrl,
    attempt: F,
) -> Result<T, StorageError>
where
    T: Send + 'static,
    F: Fn() -> Result<T, StorageError> + Clone + Send + 'static,
{
    let deadline = Instant::now() + args.startup_timeout;
    loop {
        let result = tokio::task::spawn_blocking(attempt.clone())
            .await
            .map_err(|err| StorageError::other(err.to_string()))?;
        match result {
            Ok(value) => return Ok(value),
            Err(err) if err.is_transient() => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(gave_up(err, args.startup_timeout));
                }
                tracing::warn!(database = %url, error = %err, "database not reachable yet; retrying");
                tokio::time::sleep(RETRY_PAUSE.min(left)).await;
            }
            Err(err) => return Err(err),
        }
    }
}

/// The last error of an unreachable database, saying that start-up waited for it as long as it
/// may: the setting to raise if the database takes longer to come up.
fn gave_up(err: StorageError, timeout: Duration) -> StorageError {
    match err {
        StorageError::Unreachable { database, reason } => StorageError::Unreachable {
            database,
            reason: format!(
                "gave up after PETSTORE_STARTUP_TIMEOUT ({}) of retries: {reason}",
                humantime::format_duration(timeout)
            ),
        },
        other => other,
    }
}

/// Opens the storage behind `args`, applying pending migrations.
pub async fn open_storage(args: &StorageArgs) -> Result<Storage, StorageError> {
    let url = args.database_url()?;
    args.create_default_data_dir()?;
    let settings = args.pool_settings();
    tracing::info!(database = %url, "opening storage");
    let attempt_url = url.clone();
    with_startup_retry(args, &url, move || {
        petstore_persistence::open(&attempt_url, &settings)
    })
    .await
}
