//! A write transaction with its idempotency record: the one shape of every write that may
//! carry a key outside the group commit (order transactions, a pet's change). The work runs, its
//! record is stored with it ([`records::store_with_write`]), and a live record stored first for
//! the key answers instead, also in place of the work's refusal: the retry of a carried-out
//! request finds what that request changed (its pet taken by its own order, its version moved
//! on) and must be replayed, not refused.
//!
//! These writes may share their commit (`Writes::run_shared`): on SQLite the transaction here is
//! then a savepoint of the writer's, and a refusal or failure rolls back only its own.

use std::cell::RefCell;

use diesel::result::Error as DieselError;
use diesel::QueryResult;
use petstore_application::{RecordPlan, RepositoryError, Written};

use super::records::{self, RecordRow};
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::write_transaction::in_write_transaction;

/// Why a write's work stopped before storing anything; its transaction is rolled back.
pub(crate) enum Stop<E> {
    /// Refused by a rule of the use case: answered from an earlier record when there is one.
    Refused(E),
    /// Failed for a reason of storage's, passed on as it is.
    Failed(E),
    /// A statement failed: the transaction is retried or reported like any write's.
    Statement(DieselError),
}

impl<E> From<DieselError> for Stop<E> {
    fn from(error: DieselError) -> Self {
        Self::Statement(error)
    }
}

/// Runs `work` in one write transaction (after `take_turn`), with the record `plan` makes of
/// its result when there is a plan: see the module's documentation.
pub(crate) fn write_recorded<T, E>(
    conn: &mut AnyConnection,
    take_turn: fn(&mut AnyConnection) -> QueryResult<()>,
    plan: Option<&RecordPlan<T>>,
    health: &StoreHealth,
    work: impl Fn(&mut AnyConnection) -> Result<T, Stop<E>>,
) -> Result<Written<T>, E>
where
    E: From<RepositoryError>,
{
    // What ended the work without a statement failing waits here while diesel rolls back.
    let stopped: RefCell<Option<E>> = RefCell::new(None);
    let earlier: RefCell<Option<RecordRow>> = RefCell::new(None);
    let outcome = in_write_transaction(conn, take_turn, |conn| {
        let result = match work(conn) {
            Ok(result) => result,
            Err(Stop::Statement(error)) => return Err(error),
            Err(Stop::Failed(error)) => {
                stopped.replace(Some(error));
                return Err(DieselError::RollbackTransaction);
            }
            Err(Stop::Refused(error)) => {
                if let Some(plan) = plan {
                    let row = records::find(conn, &plan.owner, &plan.key)?;
                    earlier.replace(row.filter(|row| row.is_live(plan.expired_before)));
                }
                stopped.replace(Some(error));
                return Err(DieselError::RollbackTransaction);
            }
        };
        let Some(plan) = plan else {
            return Ok(Written::Done(result, None));
        };
        let record = plan.record_for(&result);
        let mut stored =
            records::store_with_write(conn, std::slice::from_ref(&record), plan.expired_before)?;
        if let Some(row) = stored.pop().flatten() {
            earlier.replace(Some(row));
            return Err(DieselError::RollbackTransaction);
        }
        Ok(Written::Done(result, Some(record.response)))
    });
    match (outcome, earlier.into_inner(), stopped.into_inner()) {
        (Ok(written), _, _) => Ok(written),
        (Err(_), Some(row), _) => Ok(Written::Earlier(row.into_record()?)),
        (Err(_), None, Some(error)) => Err(error),
        (Err(failure), None, None) => Err(failure.into_repository_error(health).into()),
    }
}
