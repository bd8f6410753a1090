//! The export format, `petstore-export` version 1: JSON Lines. The first line is the header
//! (format, version, schema version, key id, when), then one line per row,
//! `{"table":NAME,"row":{COLUMN:VALUE,...}}`, table after table in the order of
//! [`TABLES`](super::tables::TABLES), then the end line with the count of rows of each table and
//! each sequence's high-water mark. A file without its end line was cut short.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) const FORMAT_NAME: &str = "petstore-export";
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The first line of an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportHeader {
    pub format: String,
    pub version: u32,
    /// The latest migration applied to the exported database.
    pub schema_version: String,
    /// The key id (`kid`) of the secret that signed the exported keys.
    pub key_id: String,
    /// Seconds since the Unix epoch.
    pub exported_at: i64,
}

/// The last line of an export: `{"end":{...}}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct End {
    /// Rows written, by table.
    pub(crate) rows: BTreeMap<String, u64>,
    /// The highest id each table's sequence had handed out.
    pub(crate) sequences: BTreeMap<String, i64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct EndLine {
    pub(crate) end: End,
}
