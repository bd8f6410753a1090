//! The statements an export and an import run, written from [`TABLES`](super::tables::TABLES)
//! for each dialect: the database writes each row as JSON (`json_object`, `json_build_object`)
//! and reads a batch of rows back from one JSON array (`json_each`, `jsonb_array_elements`).

use super::tables::{Kind, Table};

/// Rows per page of an export and per statement of an import.
pub(crate) const BATCH: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// `SELECT line` of the page of `table` after the bound key (`after`: one parameter per key
/// column), or of its first page; each `line` is `{"table":NAME,"row":{...}}`.
pub(crate) fn select_page(dialect: Dialect, table: &Table, after: bool) -> String {
    let object = match dialect {
        Dialect::Sqlite => "json_object",
        Dialect::Postgres => "json_build_object",
    };
    let pairs: Vec<String> = table
        .columns
        .iter()
        .map(|column| {
            let value = match (column.kind, dialect) {
                (Kind::Integer | Kind::Text, _) => column.name.to_owned(),
                (Kind::Bytes, Dialect::Sqlite) => format!(
                    "CASE WHEN {0} IS NULL THEN NULL ELSE lower(hex({0})) END",
                    column.name
                ),
                (Kind::Bytes, Dialect::Postgres) => format!("encode({}, 'hex')", column.name),
            };
            format!("'{}', {value}", column.name)
        })
        .collect();
    let cast = match dialect {
        Dialect::Sqlite => "",
        Dialect::Postgres => "::text",
    };
    let key: Vec<&str> = table.key().iter().map(|column| column.name).collect();
    let filter = if after {
        let parameters: Vec<String> = (1..=key.len())
            .map(|n| match dialect {
                Dialect::Sqlite => "?".to_owned(),
                Dialect::Postgres => format!("${n}"),
            })
            .collect();
        format!("WHERE ({}) > ({})", key.join(", "), parameters.join(", "))
    } else {
        String::new()
    };
    format!(
        "SELECT {object}('table', '{name}', 'row', {object}({pairs})){cast} AS line \
         FROM {name} {filter} ORDER BY {order} LIMIT {BATCH}",
        name = table.name,
        pairs = pairs.join(", "),
        order = key.join(", "),
    )
}

/// `INSERT` of the rows of one bound JSON array of row objects into `table`.
pub(crate) fn insert_batch(dialect: Dialect, table: &Table) -> String {
    let names: Vec<&str> = table.columns.iter().map(|column| column.name).collect();
    let values: Vec<String> = table
        .columns
        .iter()
        .map(|column| match (dialect, column.kind) {
            (Dialect::Sqlite, Kind::Integer | Kind::Text) => {
                format!("json_extract(value, '$.{}')", column.name)
            }
            (Dialect::Sqlite, Kind::Bytes) => {
                format!("unhex(json_extract(value, '$.{}'))", column.name)
            }
            (Dialect::Postgres, Kind::Integer) => format!("(value->>'{}')::bigint", column.name),
            (Dialect::Postgres, Kind::Text) => format!("value->>'{}'", column.name),
            (Dialect::Postgres, Kind::Bytes) => {
                format!("decode(value->>'{}', 'hex')", column.name)
            }
        })
        .collect();
    let rows = match dialect {
        Dialect::Sqlite => "json_each(?)".to_owned(),
        Dialect::Postgres => "jsonb_array_elements($1::jsonb) AS rows(value)".to_owned(),
    };
    format!(
        "INSERT INTO {} ({}) SELECT {} FROM {rows}",
        table.name,
        names.join(", "),
        values.join(", ")
    )
}

/// `SELECT ... AS n`: the highest id `table`'s sequence has handed out (0 for none).
pub(crate) fn sequence_value(dialect: Dialect, table: &Table) -> String {
    match dialect {
        Dialect::Sqlite => format!(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '{}'), 0) AS n",
            table.name
        ),
        Dialect::Postgres => format!(
            "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('{0}', '{1}')::regclass), 0) AS n",
            table.name,
            table.sequence_column()
        ),
    }
}

/// Moves `table`'s sequence past `value` and past every id in the table.
pub(crate) fn move_sequence(dialect: Dialect, table: &Table, value: i64) -> String {
    let (name, key) = (table.name, table.sequence_column());
    match dialect {
        Dialect::Sqlite => format!(
            "UPDATE sqlite_sequence SET seq = MAX(seq, {value}) WHERE name = '{name}'; \
             INSERT INTO sqlite_sequence (name, seq) SELECT '{name}', {value} WHERE {value} > 0 \
             AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{name}');"
        ),
        Dialect::Postgres => format!(
            "SELECT setval(pg_get_serial_sequence('{name}', '{key}'), v) FROM (SELECT \
             GREATEST({value}, (SELECT COALESCE(MAX({key}), 0) FROM {name})) AS v) AS high \
             WHERE v > 0"
        ),
    }
}
