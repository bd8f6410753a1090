//! The idempotency records in SQL: their rows and statements (among them the one routine by
//! which the pets' group commit and the order transactions store a record with their write),
//! their store, and PostgreSQL's sweep that purges the expired ones.

pub(crate) mod record_sweep;
pub(crate) mod records;
pub(crate) mod store;
