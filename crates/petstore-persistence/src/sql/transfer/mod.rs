//! Moving the data between databases of either backend: [`export()`] writes a database as
//! JSON Lines (`format.rs`), [`import()`] reads it into another. `tables.rs` says what is
//! carried, `sql_text.rs` the statements each dialect runs for it.

mod connect;
mod export;
mod format;
mod import;
mod sql_text;
mod tables;

pub use export::{export, ExportError, ExportSummary};
pub use format::ExportHeader;
pub use import::{import, ImportError, ImportOptions, ImportSummary};

#[cfg(test)]
mod tests;
