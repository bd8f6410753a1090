//! The stamp inside a backup: one row of the table `petstore_backup`, written into the copy
//! only (never into a live database), saying which migration the copy is at and which key
//! secret (by its key id) signed the keys in it. A restore reads it and drops the table.

use diesel::connection::SimpleConnection as _;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::SqliteConnection;

use super::sqlite_file::has_table;

const TABLE: &str = "petstore_backup";

/// What a backup says about itself.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct BackupStamp {
    /// The latest migration applied to the copy.
    #[diesel(sql_type = Text)]
    pub schema_version: String,
    /// The key id (`kid`) of the secret that signs the keys in the copy.
    #[diesel(sql_type = Text)]
    pub key_id: String,
    /// When the copy was taken, in seconds since the Unix epoch.
    #[diesel(sql_type = BigInt)]
    pub taken_at: i64,
}

pub(crate) fn write(conn: &mut SqliteConnection, stamp: &BackupStamp) -> QueryResult<()> {
    conn.batch_execute(&format!(
        "CREATE TABLE {TABLE} (schema_version TEXT NOT NULL, key_id TEXT NOT NULL, \
         taken_at BIGINT NOT NULL)"
    ))?;
    diesel::sql_query(format!(
        "INSERT INTO {TABLE} (schema_version, key_id, taken_at) VALUES (?, ?, ?)"
    ))
    .bind::<Text, _>(&stamp.schema_version)
    .bind::<Text, _>(&stamp.key_id)
    .bind::<BigInt, _>(stamp.taken_at)
    .execute(conn)?;
    Ok(())
}

/// The stamp, or `None` for a file that has none (a copy not made by `petstore backup`).
pub(crate) fn read(conn: &mut SqliteConnection) -> QueryResult<Option<BackupStamp>> {
    if !has_table(conn, TABLE)? {
        return Ok(None);
    }
    diesel::sql_query(format!(
        "SELECT schema_version, key_id, taken_at FROM {TABLE} LIMIT 1"
    ))
    .get_result(conn)
    .optional()
}

pub(crate) fn remove(conn: &mut SqliteConnection) -> QueryResult<()> {
    conn.batch_execute(&format!("DROP TABLE IF EXISTS {TABLE}"))
}
