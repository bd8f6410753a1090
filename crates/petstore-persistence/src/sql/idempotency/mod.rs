//! The idempotency records in SQL: their rows and statements (which the pets' group commit and
//! the order transactions run too), what a write that may store one came to, their store, and
//! PostgreSQL's sweep that purges the expired ones.

pub(crate) mod record_sweep;
pub(crate) mod records;
pub(crate) mod store;
pub(crate) mod written;
