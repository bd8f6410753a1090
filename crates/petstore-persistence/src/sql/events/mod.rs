//! The event feed on SQL: reading the events the resources' writes put in the outbox
//! (`engine/outbox.rs`) back in feed order, and purging the oldest.
//!
//! On SQLite one writer commits at a time, so the feed is in `sequence` order and every
//! position is `(0, sequence)`. On PostgreSQL the feed is in `(commit_position, sequence)`
//! order, the writing transaction's id first, and is read only below the oldest transaction
//! still open: a transaction that commits later has a higher id than any event a reader was
//! given, so nothing ever appears behind a reader's position.

mod feed;
mod rows;

pub use feed::DieselEventFeed;
