//! Translates diesel, r2d2 and migration failures into the port's `RepositoryError` and into
//! `StorageError` for the operator.
//!
//! `Unavailable` means "the database did not answer in time; try again": a closed or unusable
//! connection, a pool that found no working connection within the checkout timeout, a statement
//! PostgreSQL cancelled at the statement timeout, SQLite still locked after its busy timeout, or
//! a write that kept failing to serialize. Everything else is `Unexpected`, including a unique
//! violation: ids come from the database, so one can only mean the schema was tampered with, and
//! retrying would not help. No write here runs at an isolation level that can fail to
//! serialize, but should one ever (a stricter `default_transaction_isolation` on the server),
//! `write_transaction.rs` retries the whole write a few times first. Neither kind carries SQL to
//! clients: the HTTP layer shows only the variant; the source is for logs.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use petstore_application::{BoxError, RepositoryError};

use crate::{DatabaseUrl, StorageError};

/// A message (from the pool, the driver or an invariant of ours), already scrubbed of any
/// password, kept as an error source.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ScrubbedMessage(pub(crate) String);

pub(crate) fn from_query(error: DieselError) -> RepositoryError {
    if is_unavailable(&error) {
        RepositoryError::Unavailable(Box::new(error))
    } else {
        RepositoryError::Unexpected(Box::new(error))
    }
}

/// r2d2 only reports that no connection came in time, with the last connection error as text.
pub(crate) fn from_checkout(error: &r2d2::Error, url: &DatabaseUrl) -> RepositoryError {
    RepositoryError::Unavailable(Box::new(ScrubbedMessage(url.scrub(&error.to_string()))))
}

pub(crate) fn is_unavailable(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection
            | DatabaseErrorKind::UnableToSendCommand
            | DatabaseErrorKind::SerializationFailure,
            _,
        ) => true,
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => {
            is_sqlite_busy(info.message())
                || is_statement_timeout(info.message())
                || is_deadlock(error)
                || is_connection_lost(error)
        }
        _ => false,
    }
}

/// The connection itself is gone (the server closed it, restarted, or the network broke): the
/// pool must not hand it out again.
pub(crate) fn is_connection_lost(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => true,
        // SQLSTATE 57P01, sent just before the server closes the session; diesel reports it as
        // unknown when the connection still looked open.
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => info
            .message()
            .starts_with("terminating connection due to administrator command"),
        _ => false,
    }
}

/// SQLite's SQLITE_BUSY / SQLITE_LOCKED after the busy timeout ran out: the database is
/// overloaded, not broken.
fn is_sqlite_busy(message: &str) -> bool {
    message.starts_with("database is locked")
        || message.starts_with("database is busy")
        || message.starts_with("database table is locked")
}

/// PostgreSQL cancelled the statement at `statement_timeout` (SQLSTATE 57014, which diesel does
/// not expose, so the server's fixed message is matched).
fn is_statement_timeout(message: &str) -> bool {
    message.starts_with("canceling statement due to statement timeout")
}

pub(crate) fn is_serialization_failure(error: &DieselError) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)
    )
}

/// PostgreSQL broke a deadlock by failing this transaction (SQLSTATE 40P01, which diesel does
/// not expose, so the server's fixed message is matched). Like a serialization failure, it says
/// nothing about the data: the same transaction tried again is expected to succeed.
pub(crate) fn is_deadlock(error: &DieselError) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().starts_with("deadlock detected")
    )
}

/// A connection that could not be opened. For PostgreSQL that is usually the server being down
/// or not reachable yet, which a start-up loop may wait out; a SQLite file that cannot be opened
/// (permissions, not a database) will not fix itself.
pub(crate) fn connect_failed(url: &DatabaseUrl, error: &diesel::r2d2::Error) -> StorageError {
    let reason = url.scrub(&error.to_string());
    match url {
        DatabaseUrl::Postgres(_) => postgres_connect_failed(url, reason),
        DatabaseUrl::Memory | DatabaseUrl::Sqlite(_) => {
            StorageError::Other(format!("cannot open the SQLite database {url}: {reason}"))
        }
    }
}

/// No connection within the checkout timeout; r2d2 gives the last connection error as text.
pub(crate) fn checkout_failed(url: &DatabaseUrl, error: &r2d2::Error) -> StorageError {
    let reason = url.scrub(&error.to_string());
    match url {
        DatabaseUrl::Postgres(_) => postgres_connect_failed(url, reason),
        DatabaseUrl::Memory | DatabaseUrl::Sqlite(_) => StorageError::Unreachable {
            database: url.to_string(),
            reason,
        },
    }
}

/// A PostgreSQL connection that could not be opened, for start-up: `Refused` when the server
/// answered with a refusal waiting cannot fix, else `Unreachable` (down, not up yet, starting,
/// out of connections, a network that does not answer), which a start-up loop waits out.
fn postgres_connect_failed(url: &DatabaseUrl, reason: String) -> StorageError {
    let database = url.to_string();
    if is_refusal_waiting_cannot_fix(&reason) {
        StorageError::Refused { database, reason }
    } else {
        StorageError::Unreachable { database, reason }
    }
}

/// Whether libpq's message says the server refused this client for good. SQLSTATEs do not
/// reach us through diesel's connection errors, so the server's fixed messages are matched (keep
/// `lc_messages` English): 3D000 `database "x" does not exist`, 28000 `role "x" does not exist`
/// and `role "x" is not permitted to log in`, 28P01 `password authentication failed`, the other
/// authentication methods' failures, `no pg_hba.conf entry`, a password the server asked for and
/// was not given, and TLS the server cannot do.
fn is_refusal_waiting_cannot_fix(message: &str) -> bool {
    [
        "does not exist",
        "is not permitted to log in",
        "authentication failed",
        "no pg_hba.conf entry",
        "no password supplied",
        "server does not support SSL",
    ]
    .iter()
    .any(|refusal| message.contains(refusal))
}

pub(crate) fn query_failed(url: &DatabaseUrl, error: &DieselError) -> StorageError {
    let reason = url.scrub(&error.to_string());
    if is_unavailable(error) {
        StorageError::Unreachable {
            database: url.to_string(),
            reason,
        }
    } else {
        StorageError::Other(format!("the database {url} failed: {reason}"))
    }
}

/// A failed migration run. The connection dropping mid-way is worth retrying (each migration
/// runs in a transaction, so nothing half-applied stays behind); a bad migration is not.
/// diesel_migrations does not expose the driver error inside its own, so the caller says
/// whether the connection still answered afterwards.
pub(crate) fn migration_failed(
    url: &DatabaseUrl,
    error: &BoxError,
    connection_lost: bool,
) -> StorageError {
    let reason = url.scrub(&error.to_string());
    let lost = connection_lost
        || error
            .downcast_ref::<DieselError>()
            .is_some_and(is_unavailable);
    if lost {
        StorageError::Unreachable {
            database: url.to_string(),
            reason,
        }
    } else {
        StorageError::Migration {
            database: url.to_string(),
            reason,
        }
    }
}

/// The store-wide fault an error shows, if any (see `health.rs`): SQLite's SQLITE_FULL (the
/// unix VFS reports a write that met ENOSPC as one) and SQLITE_READONLY (a file, directory or
/// filesystem the process may not write, or a file opened read-only when it could not be opened
/// for writing), and PostgreSQL refusing writes in a read-only transaction (a standby).
pub(crate) fn fault_of(error: &DieselError) -> Option<petstore_application::StorageFault> {
    use petstore_application::StorageFault;
    let DieselError::DatabaseError(_, info) = error else {
        return None;
    };
    let message = info.message();
    if message.starts_with("database or disk is full") {
        Some(StorageFault::Full)
    } else if message.starts_with("attempt to write a readonly database")
        || message.starts_with("cannot execute") && message.ends_with("in a read-only transaction")
    {
        Some(StorageFault::ReadOnly)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database_error(kind: DatabaseErrorKind, message: &str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(message.to_owned()))
    }

    #[test]
    fn lost_connections_and_sqlite_busy_are_unavailable() {
        for error in [
            database_error(
                DatabaseErrorKind::ClosedConnection,
                "server closed the connection",
            ),
            database_error(DatabaseErrorKind::UnableToSendCommand, "no connection"),
            database_error(DatabaseErrorKind::Unknown, "database is locked"),
            database_error(DatabaseErrorKind::Unknown, "database is busy"),
            database_error(
                DatabaseErrorKind::Unknown,
                "canceling statement due to statement timeout",
            ),
            database_error(
                DatabaseErrorKind::SerializationFailure,
                "could not serialize access due to concurrent update",
            ),
        ] {
            assert!(
                matches!(from_query(error), RepositoryError::Unavailable(_)),
                "should be unavailable"
            );
        }
    }

    #[test]
    fn constraint_violations_and_bugs_are_unexpected() {
        for error in [
            database_error(
                DatabaseErrorKind::UniqueViolation,
                "duplicate key value violates unique constraint \"pets_pkey\"",
            ),
            database_error(
                DatabaseErrorKind::Unknown,
                "canceling statement due to user request",
            ),
            database_error(DatabaseErrorKind::CheckViolation, "pets_status_check"),
            database_error(DatabaseErrorKind::Unknown, "no such table: pets"),
            DieselError::NotFound,
        ] {
            assert!(
                matches!(from_query(error), RepositoryError::Unexpected(_)),
                "should be unexpected"
            );
        }
    }

    #[test]
    fn full_and_read_only_files_are_store_faults() {
        use petstore_application::StorageFault;
        let full = database_error(DatabaseErrorKind::Unknown, "database or disk is full");
        assert_eq!(fault_of(&full), Some(StorageFault::Full));
        let read_only = database_error(
            DatabaseErrorKind::ReadOnlyTransaction,
            "attempt to write a readonly database",
        );
        assert_eq!(fault_of(&read_only), Some(StorageFault::ReadOnly));
        let busy = database_error(DatabaseErrorKind::Unknown, "database is locked");
        assert_eq!(fault_of(&busy), None);
    }

    #[test]
    fn refusals_waiting_cannot_fix_are_told_from_a_server_not_up_yet() {
        for refusal in [
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  database \"nope\" does not exist",
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  role \"ghost\" does not exist",
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password authentication failed for user \"app\"",
            "connection to server at \"127.0.0.1\", port 5432 failed: fe_sendauth: no password supplied",
            "FATAL:  no pg_hba.conf entry for host \"10.0.0.3\", user \"app\", database \"p\", no encryption",
        ] {
            assert!(is_refusal_waiting_cannot_fix(refusal), "{refusal}");
        }
        for passing in [
            "connection to server at \"127.0.0.1\", port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  the database system is starting up",
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, too many clients already",
            "timeout expired",
            "could not translate host name \"db\" to address: Temporary failure in name resolution",
        ] {
            assert!(!is_refusal_waiting_cannot_fix(passing), "{passing}");
        }
    }

    #[test]
    fn deadlocks_are_recognised_for_retry_and_are_unavailable_when_they_persist() {
        let deadlock = database_error(DatabaseErrorKind::Unknown, "deadlock detected");
        assert!(is_deadlock(&deadlock));
        assert!(is_unavailable(&deadlock));
        assert!(!is_deadlock(&database_error(
            DatabaseErrorKind::Unknown,
            "relation \"api_keys\" does not exist"
        )));
    }

    #[test]
    fn serialization_failures_are_recognised_for_retry() {
        assert!(is_serialization_failure(&database_error(
            DatabaseErrorKind::SerializationFailure,
            "could not serialize access"
        )));
        assert!(!is_serialization_failure(&database_error(
            DatabaseErrorKind::UniqueViolation,
            "duplicate key"
        )));
    }

    #[test]
    fn repository_errors_show_no_sql_or_driver_text() {
        let error = from_query(database_error(
            DatabaseErrorKind::UniqueViolation,
            "duplicate key value violates unique constraint \"pets_pkey\"",
        ));
        assert_eq!(error.to_string(), "storage failed unexpectedly");
    }

    #[test]
    fn checkout_errors_are_unavailable_and_scrubbed() {
        let url: DatabaseUrl = "postgres://app:hunter2@db/p".parse().expect("valid URL");
        let message = r2d2_error("password \"hunter2\" rejected");
        let RepositoryError::Unavailable(source) = from_checkout(&message, &url) else {
            panic!("checkout failures are unavailable");
        };
        assert!(!source.to_string().contains("hunter2"), "{source}");
    }

    #[test]
    fn a_migration_cut_off_by_the_server_is_transient_a_broken_one_is_not() {
        let url: DatabaseUrl = "postgres://db/p".parse().expect("valid URL");
        let cut_off: BoxError = Box::new(database_error(
            DatabaseErrorKind::ClosedConnection,
            "server closed the connection unexpectedly",
        ));
        assert!(migration_failed(&url, &cut_off, false).is_transient());
        let broken: BoxError = Box::new(database_error(
            DatabaseErrorKind::Unknown,
            "syntax error at or near \"CREAT\"",
        ));
        assert!(migration_failed(&url, &broken, true).is_transient());
        let error = migration_failed(&url, &broken, false);
        assert!(!error.is_transient());
        assert!(error
            .to_string()
            .starts_with("applying migrations to postgres://db/p failed"));
    }

    /// r2d2 has no public constructor for its error; a pool that can never connect makes one.
    fn r2d2_error(message: &str) -> r2d2::Error {
        #[derive(Debug)]
        struct Failing(String);
        impl r2d2::ManageConnection for Failing {
            type Connection = ();
            type Error = ScrubbedMessage;
            fn connect(&self) -> Result<(), ScrubbedMessage> {
                Err(ScrubbedMessage(self.0.clone()))
            }
            fn is_valid(&self, _: &mut ()) -> Result<(), ScrubbedMessage> {
                Ok(())
            }
            fn has_broken(&self, _: &mut ()) -> bool {
                false
            }
        }
        let pool = r2d2::Pool::builder()
            .min_idle(Some(0))
            .connection_timeout(std::time::Duration::from_millis(300))
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(Failing(message.to_owned()));
        match pool.get() {
            Ok(_) => panic!("a failing manager cannot hand out connections"),
            Err(error) => error,
        }
    }
}
