//! The pets in SQL: their repository, their rows, the group commit's batch insert of new pets
//! (with their idempotency records) and PostgreSQL's grouped reads.

pub(crate) mod batch_insert;
pub(crate) mod group_read;
pub(crate) mod pet_row;
pub(crate) mod repository;
