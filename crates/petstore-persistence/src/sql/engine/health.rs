//! What a SQL store knows about its own health: available, or in one [`StorageFault`]
//! (unreachable server, full disk, read-only file) until its probe (`probe.rs`) proves it works
//! again.
//!
//! The adapters report a fault when they meet one; from then on requests that cannot succeed
//! are refused at once (one relaxed atomic load on the hot path) instead of each waiting for a
//! connection or a write that will fail: reads only while the server is unreachable, writes
//! during any fault. Each episode is logged once as an ERROR when it starts and as an INFO when
//! it ends, and counted in [`FAULTS`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use petstore_application::{RepositoryError, StorageFault};

use super::connection::Generations;
use crate::DatabaseUrl;

/// Fault episodes since start, by `fault` (`unreachable`, `full`, `read_only`).
pub const FAULTS: &str = "petstore_storage_faults_total";
/// 1 while the store is in the fault named by `fault`, else 0.
pub const IN_FAULT: &str = "petstore_storage_fault";

const AVAILABLE: u8 = 0;
const UNREACHABLE: u8 = 1;
const FULL: u8 = 2;
const READ_ONLY: u8 = 3;

fn code(fault: StorageFault) -> u8 {
    match fault {
        StorageFault::Unreachable => UNREACHABLE,
        StorageFault::Full => FULL,
        StorageFault::ReadOnly => READ_ONLY,
    }
}

fn label(fault: StorageFault) -> &'static str {
    match fault {
        StorageFault::Unreachable => "unreachable",
        StorageFault::Full => "full",
        StorageFault::ReadOnly => "read_only",
    }
}

/// The health of one store, shared by its pools, threads and repositories.
#[derive(Debug, Clone)]
pub(crate) struct StoreHealth(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    state: AtomicU8,
    database: DatabaseUrl,
    generations: Generations,
}

impl StoreHealth {
    pub(crate) fn new(database: DatabaseUrl, generations: Generations) -> Self {
        // Every fault's series exists from the start at 0, so that alerts on it (and on its
        // changes) see a healthy store rather than no data.
        for fault in [
            StorageFault::Unreachable,
            StorageFault::Full,
            StorageFault::ReadOnly,
        ] {
            metrics::gauge!(IN_FAULT, "fault" => label(fault)).set(0.0);
            metrics::counter!(FAULTS, "fault" => label(fault)).absolute(0);
        }
        Self(Arc::new(Inner {
            state: AtomicU8::new(AVAILABLE),
            database,
            generations,
        }))
    }

    /// The fault the store is known to be in, if any.
    pub(crate) fn fault(&self) -> Option<StorageFault> {
        decode(self.0.state.load(Ordering::Relaxed))
    }

    /// `Err` at once while the server is known unreachable: a read would only wait to fail.
    pub(crate) fn admit_read(&self) -> Result<(), RepositoryError> {
        if self.0.state.load(Ordering::Relaxed) == UNREACHABLE {
            return Err(RepositoryError::Unavailable(Box::new(
                StorageFault::Unreachable,
            )));
        }
        Ok(())
    }

    /// `Err` at once during any known fault: a write would only wait to fail.
    pub(crate) fn admit_write(&self) -> Result<(), RepositoryError> {
        match self.fault() {
            None => Ok(()),
            Some(fault) => Err(RepositoryError::Unavailable(Box::new(fault))),
        }
    }

    /// Records `fault`, seen with `reason` (scrubbed here). Only the first report of an episode
    /// is logged and counted; a report while another fault is known replaces it.
    pub(crate) fn report(&self, fault: StorageFault, reason: &str) {
        let new = code(fault);
        let old = self.0.state.swap(new, Ordering::AcqRel);
        if old == new {
            return;
        }
        // Connections that met a read-only file (or a server that went away) must not be handed
        // out again: when the fault ends, every connection is a new one.
        self.0.generations.retire_all();
        let database = &self.0.database;
        let reason = database.scrub(reason);
        match fault {
            StorageFault::Unreachable => tracing::error!(
                %database, %reason,
                "the database is not reachable; requests answer 503 until it is back"
            ),
            StorageFault::Full => tracing::error!(
                %database, %reason,
                "the storage is full; writes answer 503 (reads still work) until space is freed"
            ),
            StorageFault::ReadOnly => tracing::error!(
                %database, %reason,
                "the database cannot be written; writes answer 503 (reads still work) until it \
                 is writable again"
            ),
        }
        if let Some(previous) = decode(old) {
            metrics::gauge!(IN_FAULT, "fault" => label(previous)).set(0.0);
        }
        metrics::counter!(FAULTS, "fault" => label(fault)).increment(1);
        metrics::gauge!(IN_FAULT, "fault" => label(fault)).set(1.0);
    }

    /// Records a failure met by a query, if it is one of the faults.
    pub(crate) fn report_error(&self, error: &diesel::result::Error) {
        if let Some(fault) = super::errors::fault_of(error) {
            self.report(fault, &error.to_string());
        }
    }

    /// The probe proved the store works again.
    pub(crate) fn recovered(&self) {
        let old = self.0.state.swap(AVAILABLE, Ordering::AcqRel);
        let Some(fault) = decode(old) else {
            return;
        };
        self.0.generations.retire_all();
        tracing::info!(
            database = %self.0.database,
            fault = label(fault),
            "storage works again; requests are served"
        );
        metrics::gauge!(IN_FAULT, "fault" => label(fault)).set(0.0);
    }
}

fn decode(state: u8) -> Option<StorageFault> {
    match state {
        UNREACHABLE => Some(StorageFault::Unreachable),
        FULL => Some(StorageFault::Full),
        READ_ONLY => Some(StorageFault::ReadOnly),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health() -> StoreHealth {
        let url: DatabaseUrl = "sqlite:///tmp/x.db".parse().expect("valid URL");
        StoreHealth::new(url, Generations::default())
    }

    #[test]
    fn a_full_disk_refuses_writes_and_admits_reads_until_recovered() {
        let health = health();
        assert!(health.admit_write().is_ok());
        health.report(StorageFault::Full, "database or disk is full");
        assert!(health.admit_read().is_ok());
        let Err(RepositoryError::Unavailable(source)) = health.admit_write() else {
            panic!("writes are refused while full");
        };
        assert_eq!(
            source.downcast_ref::<StorageFault>(),
            Some(&StorageFault::Full)
        );
        health.recovered();
        assert!(health.admit_write().is_ok());
    }

    #[test]
    fn an_unreachable_server_refuses_reads_too() {
        let health = health();
        health.report(StorageFault::Unreachable, "connection refused");
        assert!(health.admit_read().is_err());
        assert_eq!(health.fault(), Some(StorageFault::Unreachable));
    }
}
