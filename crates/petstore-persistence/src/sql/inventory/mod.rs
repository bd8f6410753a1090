//! The inventory in SQL: the live pets counted by status in one grouped read.

pub(crate) mod repository;
