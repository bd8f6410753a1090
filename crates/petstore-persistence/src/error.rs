//! `StorageError`: why storage could not be opened or migrated, worded for the operator who
//! started the server. Database URLs appear redacted and driver messages scrubbed of passwords.

use std::path::PathBuf;

/// Why opening or migrating storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(
        "invalid database URL: {reason}; expected `memory:`, a SQLite file path or \
         `sqlite://PATH`, `postgres://USER@HOST:PORT/DATABASE`, or libpq keywords \
         (`host=HOST dbname=DATABASE user=USER`)"
    )]
    InvalidDatabaseUrl { reason: String },

    #[error("invalid storage settings: {reason}")]
    InvalidSettings { reason: String },

    #[error(
        "the directory {} of the SQLite database does not exist; create it, or point \
         DATABASE_URL at a file in an existing directory",
        path.display()
    )]
    MissingDirectory { path: PathBuf },

    /// The database did not answer (server down, unreachable, refusing connections, or the
    /// pool timed out). Retrying later may succeed.
    #[error("cannot connect to the database {database}: {reason}")]
    Unreachable { database: String, reason: String },

    /// The database server answered and refused this client for a reason waiting cannot fix:
    /// the database or the role does not exist, the password is wrong, no `pg_hba.conf` entry
    /// lets it in. The configuration must change.
    #[error("the database {database} refused the connection: {reason}")]
    Refused { database: String, reason: String },

    #[error("applying migrations to {database} failed: {reason}")]
    Migration { database: String, reason: String },

    #[error("{0}")]
    Other(String),
}

impl StorageError {
    /// A failure outside the categories above, e.g. a start-up task that panicked.
    pub fn other(message: impl Into<String>) -> Self {
        Self::Other(message.into())
    }

    /// Whether trying again later may succeed (the database may simply not be up yet), as
    /// opposed to a mistake in the configuration or the schema that retrying cannot fix.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unreachable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unreachable_is_transient() {
        let unreachable = StorageError::Unreachable {
            database: "postgres://db/p".into(),
            reason: "connection refused".into(),
        };
        assert!(unreachable.is_transient());
        assert!(!StorageError::other("boom").is_transient());
        assert!(!StorageError::Refused {
            database: "postgres://db/p".into(),
            reason: "FATAL:  database \"p\" does not exist".into(),
        }
        .is_transient());
        assert!(!StorageError::Migration {
            database: "sqlite://x".into(),
            reason: "syntax error".into()
        }
        .is_transient());
    }

    #[test]
    fn messages_name_the_database_and_the_reason() {
        let err = StorageError::Unreachable {
            database: "postgres://app:***@db/p".into(),
            reason: "connection refused".into(),
        };
        assert_eq!(
            err.to_string(),
            "cannot connect to the database postgres://app:***@db/p: connection refused"
        );
    }
}
