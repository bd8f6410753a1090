//! The `idempotency_records` table: rows to records and back, and the statements the writes
//! (group commit, order transactions) and the idempotency store run on it, each written once
//! for both backends.

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Binary, HasSqlType, Integer, Text};
use petstore_application::{
    Fingerprint, IdempotencyRecord, KeyOwner, RepositoryError, StoredResponse,
};
use petstore_domain::IdempotencyKey;

use super::connection::AnyConnection;
use super::errors::Detail;
use super::schema::idempotency_records;

#[derive(Debug, Queryable, QueryableByName)]
#[diesel(table_name = idempotency_records)]
pub(crate) struct RecordRow {
    owner: String,
    key: String,
    fingerprint: Vec<u8>,
    status: i32,
    headers: String,
    body: Vec<u8>,
    stored_at: i64,
}

pub(crate) const COLUMNS: (
    idempotency_records::owner,
    idempotency_records::key,
    idempotency_records::fingerprint,
    idempotency_records::status,
    idempotency_records::headers,
    idempotency_records::body,
    idempotency_records::stored_at,
) = (
    idempotency_records::owner,
    idempotency_records::key,
    idempotency_records::fingerprint,
    idempotency_records::status,
    idempotency_records::headers,
    idempotency_records::body,
    idempotency_records::stored_at,
);

impl RecordRow {
    /// Whether this record still answers for its key in a write planned with `expired_before`.
    pub(crate) fn is_live(&self, expired_before: i64) -> bool {
        self.stored_at >= expired_before
    }

    pub(crate) fn into_record(self) -> Result<IdempotencyRecord, RepositoryError> {
        let corrupt = |field: &str| {
            RepositoryError::Unexpected(Box::new(Detail(format!(
                "a stored idempotency record has an invalid {field}"
            ))))
        };
        let key = IdempotencyKey::parse(&self.key).map_err(|_| corrupt("key"))?;
        let fingerprint = <[u8; 32]>::try_from(self.fingerprint.as_slice())
            .map_err(|_| corrupt("fingerprint"))?;
        let status = u16::try_from(self.status).map_err(|_| corrupt("status"))?;
        let headers = self
            .headers
            .lines()
            .map(|line| {
                line.split_once(": ")
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .ok_or_else(|| corrupt("header"))
            })
            .collect::<Result<_, _>>()?;
        Ok(IdempotencyRecord {
            owner: KeyOwner(self.owner),
            key,
            fingerprint: Fingerprint(fingerprint),
            response: StoredResponse {
                status,
                headers,
                body: self.body,
            },
            stored_at: self.stored_at,
        })
    }
}

/// The headers of a response, one `name: value` per line (a header value holds no line break).
fn encode_headers(headers: &[(String, String)]) -> String {
    headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The stored record for `owner`'s `key`, if any.
pub(crate) fn find(
    conn: &mut AnyConnection,
    owner: &KeyOwner,
    key: &IdempotencyKey,
) -> QueryResult<Option<RecordRow>> {
    idempotency_records::table
        .filter(idempotency_records::owner.eq(&owner.0))
        .filter(idempotency_records::key.eq(key.as_str()))
        .select(COLUMNS)
        .first::<RecordRow>(conn)
        .optional()
}

/// [`insert_if_absent`] for each of `records`, in one statement; the keys (owner, key) it
/// stored.
pub(crate) fn insert_many_if_absent(
    conn: &mut AnyConnection,
    records: &[IdempotencyRecord],
    expired_before: i64,
) -> QueryResult<Vec<(String, String)>> {
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let headers: Vec<String> = records
        .iter()
        .map(|record| encode_headers(&record.response.headers))
        .collect();
    let rows: Vec<InsertedKey> = match conn {
        AnyConnection::Postgresql(pg) => {
            let sql = multi_row_insert(records.len(), |n| format!("${n}"));
            bind_records(diesel::sql_query(sql).into_boxed(), records, &headers)
                .bind::<BigInt, _>(expired_before)
                .load(pg)
        }
        AnyConnection::Sqlite(sqlite) => {
            let sql = multi_row_insert(records.len(), |_| "?".to_owned());
            bind_records(diesel::sql_query(sql).into_boxed(), records, &headers)
                .bind::<BigInt, _>(expired_before)
                .load(sqlite)
        }
    }?;
    Ok(rows.into_iter().map(|row| (row.owner, row.key)).collect())
}

#[derive(QueryableByName)]
struct InsertedKey {
    #[diesel(sql_type = Text)]
    owner: String,
    #[diesel(sql_type = Text)]
    key: String,
}

fn multi_row_insert(rows: usize, placeholder: impl Fn(usize) -> String) -> String {
    let mut sql = String::from(
        "INSERT INTO idempotency_records \
         (owner, key, fingerprint, status, headers, body, stored_at) VALUES ",
    );
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        let values: Vec<String> = (1..=7)
            .map(|column| placeholder(row * 7 + column))
            .collect();
        sql.push_str(&format!("({})", values.join(", ")));
    }
    sql.push_str(&format!(
        " {UPSERT} {} RETURNING owner, key",
        placeholder(rows * 7 + 1)
    ));
    sql
}

fn bind_records<'a, DB>(
    mut query: BoxedSqlQuery<'a, DB, SqlQuery>,
    records: &'a [IdempotencyRecord],
    headers: &'a [String],
) -> BoxedSqlQuery<'a, DB, SqlQuery>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt> + HasSqlType<Integer> + HasSqlType<Binary>,
    &'a str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    i32: ToSql<Integer, DB>,
    &'a [u8]: ToSql<Binary, DB>,
{
    for (record, headers) in records.iter().zip(headers) {
        query = query
            .bind::<Text, _>(record.owner.0.as_str())
            .bind::<Text, _>(record.key.as_str())
            .bind::<Binary, _>(record.fingerprint.0.as_slice())
            .bind::<Integer, _>(i32::from(record.response.status))
            .bind::<Text, _>(headers.as_str())
            .bind::<Binary, _>(record.response.body.as_slice())
            .bind::<BigInt, _>(record.stored_at);
    }
    query
}

/// What replaces an expired record for the key, and leaves a live one alone.
const UPSERT: &str = "ON CONFLICT (owner, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     status = excluded.status, headers = excluded.headers, body = excluded.body, \
     stored_at = excluded.stored_at WHERE idempotency_records.stored_at <";

/// Stores `record` unless a record stored at or after `expired_before` is there for its key
/// (an expired one is replaced); whether it was stored. On PostgreSQL a concurrent insert of the
/// same key is waited for, and then this one stores nothing.
pub(crate) fn insert_if_absent(
    conn: &mut AnyConnection,
    record: &IdempotencyRecord,
    expired_before: i64,
) -> QueryResult<bool> {
    const COLUMNS_SQL: &str =
        "idempotency_records (owner, key, fingerprint, status, headers, body, stored_at)";
    let headers = encode_headers(&record.response.headers);
    macro_rules! run {
        ($conn:expr, $values:literal, $cutoff:literal) => {
            diesel::sql_query(format!(
                "INSERT INTO {COLUMNS_SQL} VALUES {} {UPSERT} {}",
                $values, $cutoff
            ))
            .bind::<Text, _>(&record.owner.0)
            .bind::<Text, _>(record.key.as_str())
            .bind::<Binary, _>(record.fingerprint.0.as_slice())
            .bind::<Integer, _>(i32::from(record.response.status))
            .bind::<Text, _>(&headers)
            .bind::<Binary, _>(record.response.body.as_slice())
            .bind::<BigInt, _>(record.stored_at)
            .bind::<BigInt, _>(expired_before)
            .execute($conn)
        };
    }
    let inserted = match conn {
        AnyConnection::Postgresql(pg) => run!(pg, "($1, $2, $3, $4, $5, $6, $7)", "$8"),
        AnyConnection::Sqlite(sqlite) => run!(sqlite, "(?, ?, ?, ?, ?, ?, ?)", "?"),
    }?;
    Ok(inserted == 1)
}

/// Removes up to `max` records stored before `cutoff`, oldest first; how many.
pub(crate) fn purge(conn: &mut AnyConnection, cutoff: i64, max: i64) -> QueryResult<usize> {
    macro_rules! run {
        ($conn:expr, $cutoff:literal, $max:literal) => {
            diesel::sql_query(format!(
                "DELETE FROM idempotency_records WHERE (owner, key) IN (SELECT owner, key FROM \
                 idempotency_records WHERE stored_at < {} ORDER BY stored_at LIMIT {})",
                $cutoff, $max
            ))
            .bind::<BigInt, _>(cutoff)
            .bind::<BigInt, _>(max)
            .execute($conn)
        };
    }
    match conn {
        AnyConnection::Postgresql(pg) => run!(pg, "$1", "$2"),
        AnyConnection::Sqlite(sqlite) => run!(sqlite, "?", "?"),
    }
}
