//! The pets in SQL: their repository, their rows, the group commit's batch insert of new pets
//! (with their idempotency records), PostgreSQL's grouped reads, and a live pet inside a write
//! transaction (locked, changed, removed).

pub(crate) mod batch_insert;
pub(crate) mod group_read;
#[cfg(test)]
mod listing_plans;
pub(crate) mod locked;
pub(crate) mod name_backfill;
mod new_pet_values;
pub(crate) mod pet_row;
mod postgres_insert;
pub(crate) mod repository;
pub(crate) mod search;
#[cfg(test)]
mod search_plans;
pub(crate) mod tags;
