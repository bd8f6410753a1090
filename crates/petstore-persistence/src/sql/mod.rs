//! The diesel adapter: one repository implementation over [`connection::AnyConnection`], which is
//! either a PostgreSQL or a SQLite connection. Only connecting, per-connection settings,
//! migrations and the write-transaction flavour differ by backend; every query is written once.

mod connection;
mod errors;
mod migrations;
mod repository;
mod schema;

pub use repository::DieselPetRepository;
