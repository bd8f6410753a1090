use diesel::prelude::*;
use diesel::sql_types::Text;

use super::tables::{NOT_CARRIED, TABLES};
use crate::sql::engine::sqlite_file;
use crate::{DatabaseUrl, PoolSettings};

#[derive(QueryableByName)]
struct ColumnName {
    #[diesel(sql_type = Text)]
    name: String,
}

/// A column added to a table by a migration and not to `TABLES` would be lost by every move.
#[test]
fn every_column_of_every_exported_table_is_exported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("pets.db");
    let url: DatabaseUrl = format!("sqlite://{}", path.display()).parse().expect("url");
    crate::migrate(&url, &PoolSettings::default()).expect("migrate");
    let mut conn = sqlite_file::open(&path, 0).expect("open");
    for table in TABLES {
        let live: Vec<String> = diesel::sql_query(format!("PRAGMA table_info({})", table.name))
            .load::<ColumnName>(&mut conn)
            .expect("table_info")
            .into_iter()
            .map(|column| column.name)
            .collect();
        let exported: Vec<String> = table
            .columns
            .iter()
            .map(|column| column.name.to_owned())
            .collect();
        assert_eq!(exported, live, "{}", table.name);
    }
}

/// A table added by a migration and not to `TABLES` (nor named as not carried) would be lost.
#[test]
fn every_table_is_exported_or_named_as_not_carried() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("pets.db");
    let url: DatabaseUrl = format!("sqlite://{}", path.display()).parse().expect("url");
    crate::migrate(&url, &PoolSettings::default()).expect("migrate");
    let mut conn = sqlite_file::open(&path, 0).expect("open");
    let live: Vec<String> =
        diesel::sql_query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .load::<ColumnName>(&mut conn)
            .expect("tables")
            .into_iter()
            .map(|table| table.name)
            .collect();
    for table in &live {
        assert!(
            NOT_CARRIED.contains(&table.as_str()) || TABLES.iter().any(|t| t.name == *table),
            "{table} is neither exported nor named as not carried"
        );
    }
}
