//! What an export carries: the tables, in the order they are written and read back (a table
//! after the ones it references), and each one's columns with how they are written in JSON. A
//! new column is one line here; the test beside this list fails while a column of the live
//! schema is missing from it.

use diesel::Column as _;

use crate::sql::schema::{api_keys, orders, pets};

/// How a column's values are written: integers and text as themselves, bytes as lowercase hex;
/// `null` for a NULL of any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Integer,
    Text,
    Bytes,
}

#[derive(Debug)]
pub(crate) struct Column {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
}

const fn integer(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Integer,
    }
}

const fn text(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Text,
    }
}

const fn bytes(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Bytes,
    }
}

#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    pub(crate) columns: &'static [Column],
    /// How many of the first columns are the primary key, which rows are read in order of.
    pub(crate) key_len: usize,
    /// Whether new ids come from a sequence (PostgreSQL identity, SQLite `AUTOINCREMENT`) that
    /// an import moves past the highest id handed out: the key's last column
    /// ([`Table::sequence_column`]). Orders draw random ids.
    pub(crate) has_sequence: bool,
}

impl Table {
    pub(crate) fn key(&self) -> &[Column] {
        &self.columns[..self.key_len]
    }

    /// The column a sequence fills, when [`has_sequence`](Self::has_sequence).
    pub(crate) fn sequence_column(&self) -> &'static str {
        self.columns[self.key_len - 1].name
    }
}

/// Every table an export carries, in order.
pub(crate) const TABLES: &[Table] = &[
    Table {
        name: "categories",
        columns: &[
            integer("id"),
            text("name"),
            text("name_folded"),
            integer("removed_at"),
        ],
        key_len: 1,
        has_sequence: true,
    },
    Table {
        name: "pets",
        columns: &[
            integer(pets::id::NAME),
            text(pets::name::NAME),
            integer(pets::category_id::NAME),
            text(pets::status::NAME),
            integer(pets::version::NAME),
            integer(pets::removed_at::NAME),
            integer(pets::price_minor::NAME),
            text(pets::price_currency::NAME),
            text(pets::description::NAME),
            text(pets::photo_urls::NAME),
            text(pets::tags::NAME),
            text(pets::name_folded::NAME),
        ],
        key_len: 1,
        has_sequence: true,
    },
    Table {
        name: "pet_tags",
        columns: &[
            text("tag"),
            integer("pet_id"),
            integer("category_id"),
            text("status"),
        ],
        key_len: 2,
        has_sequence: false,
    },
    Table {
        name: "orders",
        columns: &[
            integer(orders::id::NAME),
            integer(orders::pet_id::NAME),
            integer(orders::quantity::NAME),
            text(orders::status::NAME),
            integer(orders::ship_date::NAME),
            text(orders::placed_by::NAME),
            integer(orders::price_minor::NAME),
            text(orders::price_currency::NAME),
        ],
        key_len: 1,
        has_sequence: false,
    },
    Table {
        name: "api_keys",
        columns: &[
            text(api_keys::id::NAME),
            text(api_keys::name::NAME),
            text(api_keys::scope::NAME),
            integer(api_keys::created_at::NAME),
            integer(api_keys::expires_at::NAME),
            integer(api_keys::revoked_at::NAME),
            integer(api_keys::last_used_at::NAME),
            integer(api_keys::revision::NAME),
            bytes(api_keys::token_sha256::NAME),
        ],
        key_len: 1,
        has_sequence: false,
    },
    // Paged by `sequence`, unique on either backend; each row keeps its feed position.
    Table {
        name: "events",
        columns: &[
            integer("sequence"),
            integer("commit_position"),
            text("id"),
            text("type"),
            integer("occurred_at"),
            text("order_audience"),
            text("data"),
        ],
        key_len: 1,
        has_sequence: true,
    },
    Table {
        name: "event_horizon",
        columns: &[
            integer("singleton"),
            integer("commit_position"),
            integer("sequence"),
        ],
        key_len: 1,
        has_sequence: false,
    },
    // With their sealed secrets: the target must be given the same key secrets to open them.
    Table {
        name: "webhook_endpoints",
        columns: &[
            integer("id"),
            text("url"),
            integer("event_types"),
            text("disabled_reason"),
            text("secret_sealed"),
            text("previous_secret_sealed"),
            integer("previous_secret_expires_ms"),
            integer("failing_since_ms"),
            integer("created_at_ms"),
            integer("updated_at_ms"),
        ],
        key_len: 1,
        has_sequence: true,
    },
];

/// Tables an import empties (with `--force`) before those it fills, children first: the retry
/// records and the webhooks' deliveries and fan-out position, which an export does not carry,
/// and the tables naming pets.
pub(crate) const EMPTIED_FIRST: &[&str] = &[
    "idempotency_records",
    "webhook_attempts",
    "webhook_deliveries",
    "webhook_fanout",
    "orders",
    "pet_tags",
];

/// The tables an export leaves out: the retry records (a retry across a move creates again),
/// the webhooks' deliveries and fan-out position (they belong to the source's feed), and the
/// databases' own bookkeeping.
#[cfg(test)]
pub(crate) const NOT_CARRIED: &[&str] = &[
    "idempotency_records",
    "webhook_attempts",
    "webhook_deliveries",
    "webhook_fanout",
    "__diesel_schema_migrations",
    "sqlite_sequence",
];

pub(crate) fn named(name: &str) -> Option<(usize, &'static Table)> {
    TABLES
        .iter()
        .enumerate()
        .find(|(_, table)| table.name == name)
}
