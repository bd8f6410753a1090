//! Write transactions: the write lock from the first statement, ordered across instances by a
//! lock the caller names, rolled back on any failure, retried when they fail to serialize or
//! PostgreSQL breaks a deadlock by failing them.
//!
//! A write transaction begun inside another (the writer thread's transaction around a group of
//! writes that share one commit, [`in_group_transaction`]) is a savepoint of it: its failure
//! rolls back its own statements and nothing of the others', and what it wrote is stored by the
//! outer transaction's commit, not before.

use std::num::NonZeroU32;

use diesel::connection::TransactionManager;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::PgConnection;

use petstore_application::RepositoryError;

use super::connection::AnyConnection;
use super::errors;
use super::health::StoreHealth;

/// The transaction manager of a connection of either backend.
type Transactions = <AnyConnection as Connection>::TransactionManager;

/// How often a write that failed to serialize or was a deadlock's victim is tried in all.
const WRITE_ATTEMPTS: u32 = 3;

/// Why a write transaction failed, by how far it got.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    /// Before anything was written: beginning the transaction or taking the insert turn failed.
    /// Trying again on another connection cannot store anything twice.
    NotStarted(DieselError),
    /// A statement of the transaction failed; it was rolled back.
    Statement(DieselError),
    /// The commit failed; nothing was stored (or, if the connection broke during it, the
    /// outcome is unknown, which is what "unavailable" tells the client).
    Commit(DieselError),
}

impl WriteFailure {
    pub(crate) fn error(&self) -> &DieselError {
        match self {
            Self::NotStarted(error) | Self::Statement(error) | Self::Commit(error) => error,
        }
    }

    pub(crate) fn into_error(self) -> DieselError {
        match self {
            Self::NotStarted(error) | Self::Statement(error) | Self::Commit(error) => error,
        }
    }

    /// The failure for a port: reported to the store's health (which learns of a full disk or
    /// a read-only file from it), and a known fault answered as unavailable.
    pub(crate) fn into_repository_error(self, health: &StoreHealth) -> RepositoryError {
        let error = self.into_error();
        health.report_error(&error);
        match errors::fault_of(&error) {
            Some(fault) => RepositoryError::Unavailable(Box::new(fault)),
            None => errors::from_query(error),
        }
    }
}

/// Takes the lock `lock` asks for on PostgreSQL, inside a write transaction; on SQLite nothing,
/// since the transaction's `BEGIN IMMEDIATE` already holds the database's one write lock, which
/// admits one writer at a time. The locks PostgreSQL needs (a table, an advisory lock) are the
/// one backend difference of the resources' write transactions.
pub(crate) fn lock_on_postgres(
    conn: &mut AnyConnection,
    lock: impl FnOnce(&mut PgConnection) -> QueryResult<usize>,
) -> QueryResult<()> {
    match conn {
        AnyConnection::Postgresql(pg) => lock(pg).map(drop),
        AnyConnection::Sqlite(_) => Ok(()),
    }
}

/// The turn of a write that needs none beyond its own locks (order transactions lock their rows;
/// idempotency records and keys' last uses are keyed), for [`in_write_transaction`].
pub(crate) fn no_turn(_: &mut AnyConnection) -> QueryResult<()> {
    Ok(())
}

/// Runs `work` as one transaction that holds the write lock from its first statement, after
/// `take_turn` (a lock that orders this kind of write across instances). A transaction that
/// fails to serialize or is chosen as a deadlock's victim is tried again, with a WARN saying
/// which.
///
/// On SQLite, a plain (deferred) `BEGIN` takes the write lock only at the first write, and a
/// transaction that then finds the lock taken can fail with "database is locked" without
/// waiting; `BEGIN IMMEDIATE` waits for the lock (up to the busy timeout) before doing anything.
/// PostgreSQL locks rows, not the database, so a plain `BEGIN` does.
pub(crate) fn in_write_transaction<T>(
    conn: &mut AnyConnection,
    take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
    work: impl Fn(&mut AnyConnection) -> QueryResult<T>,
) -> Result<T, WriteFailure> {
    let mut attempt = 1;
    loop {
        match write_once(conn, take_turn, &work) {
            Err(failure) if attempt < WRITE_ATTEMPTS && is_worth_retrying(failure.error()) => {
                tracing::warn!(
                    attempt,
                    reason = %failure.error(),
                    "{}; retrying the transaction",
                    if errors::is_deadlock(failure.error()) {
                        "the database broke a deadlock by failing this write"
                    } else {
                        "the write failed to serialize with a concurrent one"
                    }
                );
                attempt += 1;
            }
            outcome => return outcome,
        }
    }
}

/// A transaction that failed only because of another one running at the same time.
fn is_worth_retrying(error: &DieselError) -> bool {
    errors::is_serialization_failure(error) || errors::is_deadlock(error)
}

/// Runs `work` as one write transaction, like [`in_write_transaction`] but tried once: `work`
/// runs a group of writes, each its own [`in_write_transaction`] (a savepoint of this one), which
/// cannot be run twice.
pub(crate) fn in_group_transaction<T>(
    conn: &mut AnyConnection,
    work: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
) -> Result<T, WriteFailure> {
    write_once(conn, no_turn, work)
}

/// How many transactions are open on `conn`: none, one, or one more for each savepoint in it;
/// `None` once diesel lost track of them (a rollback failed), when the connection is of no more
/// use.
pub(crate) fn open_levels(conn: &mut AnyConnection) -> Option<u32> {
    Transactions::transaction_manager_status_mut(conn)
        .transaction_depth()
        .ok()
        .map(|depth| depth.map_or(0, NonZeroU32::get))
}

/// Rolls back every savepoint open above `levels` (what a write that stopped half-way, by a
/// panic, left open), so that none of its statements is committed.
pub(crate) fn roll_back_to(conn: &mut AnyConnection, levels: u32) -> QueryResult<()> {
    while open_levels(conn).is_some_and(|open| open > levels) {
        Transactions::rollback_transaction(conn)?;
    }
    Ok(())
}

fn write_once<T>(
    conn: &mut AnyConnection,
    take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
    work: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
) -> Result<T, WriteFailure> {
    let nested = Transactions::transaction_manager_status_mut(conn)
        .transaction_depth()
        .map_err(WriteFailure::NotStarted)?
        .is_some();
    match conn {
        // Inside a group's transaction, which holds the write lock already: a savepoint.
        _ if nested => Transactions::begin_transaction(conn),
        AnyConnection::Sqlite(sqlite) => {
            diesel::connection::AnsiTransactionManager::begin_transaction_sql(
                sqlite,
                "BEGIN IMMEDIATE",
            )
        }
        AnyConnection::Postgresql(_) => Transactions::begin_transaction(conn),
    }
    .map_err(WriteFailure::NotStarted)?;
    let outcome = take_turn(conn)
        .map_err(WriteFailure::NotStarted)
        .and_then(|()| work(conn).map_err(WriteFailure::Statement));
    match outcome {
        Ok(value) => {
            Transactions::commit_transaction(conn).map_err(WriteFailure::Commit)?;
            if let (false, AnyConnection::Sqlite(_)) = (nested, &*conn) {
                super::read_snapshot::count_commit();
            }
            Ok(value)
        }
        Err(failure) => match Transactions::rollback_transaction(conn) {
            // The original error says more than a rollback on a connection already broken.
            Ok(()) | Err(DieselError::BrokenTransactionManager) => Err(failure),
            Err(rollback_error) => Err(WriteFailure::Statement(rollback_error)),
        },
    }
}
