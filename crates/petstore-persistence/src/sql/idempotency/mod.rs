//! The idempotency records in SQL: their rows and statements (among them the one routine by
//! which every write stores a record with it, group commit included), the write transaction
//! with its record that order transactions and pet changes run in, their store, and
//! PostgreSQL's sweep that purges the expired ones.

pub(crate) mod record_sweep;
pub(crate) mod recorded_write;
pub(crate) mod records;
pub(crate) mod store;
