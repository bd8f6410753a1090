//! The `idempotency_records` table: rows to records and back, and the statements the writes
//! (group commit, order transactions) and the idempotency store run on it. Each is written once
//! for both backends, except the insert and the purge, which take each backend's cheapest form
//! (measured in docs/benchmarks.md).

use diesel::backend::Backend;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Array, BigInt, Binary, HasSqlType, Integer, Text};
use petstore_application::{Fingerprint, IdempotencyRecord, RepositoryError, StoredResponse};
use petstore_domain::{IdempotencyKey, KeyId};

use super::record_sweep::RecordSweep;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::engine::multi_row::{in_parts, BindValues, MultiRow};
use crate::sql::schema::idempotency_records;

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
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "a stored idempotency record has an invalid {field}"
            ))))
        };
        let key = IdempotencyKey::from_stored(&self.key).map_err(|_| corrupt("key"))?;
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
            owner: KeyId::parse(&self.owner).map_err(|_| corrupt("owner"))?,
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
    let length = headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 3)
        .sum();
    let mut encoded = String::with_capacity(length);
    for (name, value) in headers {
        if !encoded.is_empty() {
            encoded.push('\n');
        }
        encoded.push_str(name);
        encoded.push_str(": ");
        encoded.push_str(value);
    }
    encoded
}

/// The stored record for `owner`'s `key`, if any.
pub(crate) fn find(
    conn: &mut AnyConnection,
    owner: &KeyId,
    key: &IdempotencyKey,
) -> QueryResult<Option<RecordRow>> {
    idempotency_records::table
        .filter(idempotency_records::owner.eq(owner.as_str()))
        .filter(idempotency_records::key.eq(key.as_str()))
        .select(COLUMNS)
        .first::<RecordRow>(conn)
        .optional()
}

/// [`insert_if_absent`] for each of `records`, in one statement; how many it stored. Fewer
/// than `records` means a live record was there first for some key: which ones, the caller
/// finds out ([`is_stored`]). Not `RETURNING` the keys it stored: the usual group stores every
/// record, and reading back a row per record cost the writer thread more than the rare lookup.
pub(crate) fn insert_many_if_absent(
    conn: &mut AnyConnection,
    records: &[IdempotencyRecord],
    expired_before: i64,
) -> QueryResult<usize> {
    if records.is_empty() {
        return Ok(0);
    }
    let headers: Vec<String> = records
        .iter()
        .map(|record| encode_headers(&record.response.headers))
        .collect();
    let rows: Vec<RecordValues<'_>> = records
        .iter()
        .zip(&headers)
        .map(|(record, headers)| RecordValues::of(record, headers))
        .collect();
    match conn {
        AnyConnection::Postgresql(pg) => RecordColumns::of(&rows, expired_before).execute(pg),
        AnyConnection::Sqlite(sqlite) => {
            // In parts of power-of-two sizes, each kept prepared (`multi_row`).
            let mut stored = 0;
            for part in in_parts(&rows) {
                stored += insert_or_replace_expired(sqlite, part, expired_before)?;
            }
            Ok(stored)
        }
    }
}

/// SQLite's way to [`insert_many_if_absent`]: `INSERT OR IGNORE`, and only when some key was
/// there already, its expired record deleted and the insert run again. An upsert (`ON
/// CONFLICT ... DO UPDATE`) can abort halfway through its rows (its update and every `NOT
/// NULL` resolve conflicts by `ABORT`), so SQLite kept a statement journal for it, a copy of
/// every page the statement changed, a cost on every keyed write (`docs/benchmarks.md`).
/// `OR IGNORE` cannot abort. A replaced record is a new row, so rows stay in arrival order.
fn insert_or_replace_expired(
    conn: &mut SqliteConnection,
    rows: &[RecordValues<'_>],
    expired_before: i64,
) -> QueryResult<usize> {
    let insert = || MultiRow {
        head: INSERT_OR_IGNORE,
        rows,
        tail: "",
    };
    let stored = insert().execute(conn)?;
    if stored == rows.len() {
        return Ok(stored);
    }
    let mut expired = 0;
    for row in rows {
        expired += diesel::delete(
            idempotency_records::table
                .filter(idempotency_records::owner.eq(row.owner))
                .filter(idempotency_records::key.eq(row.key))
                .filter(idempotency_records::stored_at.lt(expired_before)),
        )
        .execute(conn)?;
    }
    if expired == 0 {
        return Ok(stored);
    }
    Ok(stored + insert().execute(conn)?)
}

/// Stores each of `records` in the transaction of the write it answers, unless a live record
/// for its key is there first: for each, `None` when stored, or the record that was there
/// first, which answers instead (its caller undoes the write). The one way every write with a
/// plan stores its record (the pets' group commit, the order transactions): insert first, and
/// look only when the insert found a key taken, so the usual first request costs no lookup
/// and a retry, the rare case, pays for the write it undoes.
pub(crate) fn store_with_write(
    conn: &mut AnyConnection,
    records: &[IdempotencyRecord],
    expired_before: i64,
) -> QueryResult<Vec<Option<RecordRow>>> {
    let stored = insert_many_if_absent(conn, records, expired_before)?;
    if stored == records.len() {
        return Ok(records.iter().map(|_| None).collect());
    }
    records
        .iter()
        .map(|record| {
            let row = find(conn, &record.owner, &record.key)?.ok_or_else(|| {
                diesel::result::Error::DeserializationError(Box::new(ScrubbedMessage(
                    "a record in the way is gone".to_owned(),
                )))
            })?;
            // A lone record not stored was in the way of a live one, whatever its response:
            // the retry of a write that changes nothing the second time (a rename to the name
            // it already has) renders the same bytes within the same second.
            Ok((records.len() == 1 || !is_stored(&row, record)).then_some(row))
        })
        .collect()
}

/// Whether `row`, found for `record`'s key, is `record` itself: stored by this transaction, not
/// there before it. The response names what the write made (the new pet's `Location`), which no
/// other write made, so equal responses are the same record.
fn is_stored(row: &RecordRow, record: &IdempotencyRecord) -> bool {
    row.fingerprint == record.fingerprint.0
        && row.stored_at == record.stored_at
        && i32::from(record.response.status) == row.status
        && row.body == record.response.body
        && row.headers == encode_headers(&record.response.headers)
}

/// The head of every insert of records on PostgreSQL; [`RecordColumns`] bind in its column
/// order.
const INSERT: &str = "INSERT INTO idempotency_records \
                      (owner, key, fingerprint, status, headers, body, stored_at)";

/// [`INSERT`] on SQLite ([`insert_or_replace_expired`]).
const INSERT_OR_IGNORE: &str = "INSERT OR IGNORE INTO idempotency_records \
                                (owner, key, fingerprint, status, headers, body, stored_at)";

/// A record's values, in the insert's column order.
struct RecordValues<'a> {
    owner: &'a str,
    key: &'a str,
    fingerprint: &'a [u8],
    status: i32,
    headers: &'a str,
    body: &'a [u8],
    stored_at: i64,
}

impl<'a> RecordValues<'a> {
    /// `record`'s values, with its headers as [`encode_headers`] wrote them.
    fn of(record: &'a IdempotencyRecord, headers: &'a str) -> Self {
        Self {
            owner: record.owner.as_str(),
            key: record.key.as_str(),
            fingerprint: &record.fingerprint.0,
            status: i32::from(record.response.status),
            headers,
            body: &record.response.body,
            stored_at: record.stored_at,
        }
    }
}

impl<DB> BindValues<DB> for RecordValues<'_>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt> + HasSqlType<Integer> + HasSqlType<Binary>,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    i32: ToSql<Integer, DB>,
    [u8]: ToSql<Binary, DB>,
{
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_bind_param::<Text, str>(self.owner)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(self.key)?;
        out.push_sql(", ");
        out.push_bind_param::<Binary, [u8]>(self.fingerprint)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, i32>(&self.status)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(self.headers)?;
        out.push_sql(", ");
        out.push_bind_param::<Binary, [u8]>(self.body)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.stored_at)
    }
}

/// A group's records on PostgreSQL as one array per column, inserted from `unnest`: one
/// statement of one shape for any number of records, where a `VALUES` list takes one statement
/// (one round trip) per power-of-two part of the group (`multi_row`) and an expression per value
/// for the executor to set up at every execution (`docs/benchmarks.md`).
struct RecordColumns<'a> {
    owners: Vec<&'a str>,
    keys: Vec<&'a str>,
    fingerprints: Vec<&'a [u8]>,
    statuses: Vec<i32>,
    headers: Vec<&'a str>,
    bodies: Vec<&'a [u8]>,
    stored_at: Vec<i64>,
    /// [`UPSERT`]'s cutoff.
    expired_before: i64,
}

impl<'a> RecordColumns<'a> {
    fn of(rows: &[RecordValues<'a>], expired_before: i64) -> Self {
        Self {
            owners: rows.iter().map(|row| row.owner).collect(),
            keys: rows.iter().map(|row| row.key).collect(),
            fingerprints: rows.iter().map(|row| row.fingerprint).collect(),
            statuses: rows.iter().map(|row| row.status).collect(),
            headers: rows.iter().map(|row| row.headers).collect(),
            bodies: rows.iter().map(|row| row.body).collect(),
            stored_at: rows.iter().map(|row| row.stored_at).collect(),
            expired_before,
        }
    }
}

impl QueryFragment<Pg> for RecordColumns<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // `unnest` in the select list, not in `FROM`: the arrays are read in step, row by row,
        // where `FROM unnest(...)` first copied every row into a tuplestore.
        out.push_sql(INSERT);
        out.push_sql(" SELECT unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.owners)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.keys)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Binary>, _>(&self.fingerprints)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Integer>, _>(&self.statuses)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.headers)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Binary>, _>(&self.bodies)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<BigInt>, _>(&self.stored_at)?;
        out.push_sql(") ");
        out.push_sql(UPSERT);
        out.push_sql(" ");
        out.push_bind_param::<BigInt, i64>(&self.expired_before)
    }
}

impl QueryId for RecordColumns<'_> {
    type QueryId = ();
    // One text; diesel keys its cache by it.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl RunQueryDsl<PgConnection> for RecordColumns<'_> {}

/// What replaces an expired record for the key on PostgreSQL, and leaves a live one alone.
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
    Ok(insert_many_if_absent(conn, std::slice::from_ref(record), expired_before)? == 1)
}

/// Removes up to `max` records stored before `cutoff`; how many. Neither backend indexes
/// `stored_at`: an index every keyed write would pay for, for a purge once a minute.
///
/// On SQLite the earliest to arrive go first: its records are kept in arrival order
/// (migrations/sqlite, 2026-11-26-000001). Of the `2 * max` records that arrived first, the
/// expired ones go: the statement reads a bounded number of rows, and a live record among the
/// first (its clock a moment behind, or one a release before this updated in place) holds up
/// none behind it. On PostgreSQL, whose heap is not in arrival order, `sweep` reads the table a
/// slice per round ([`RecordSweep`]).
pub(crate) fn purge(
    conn: &mut AnyConnection,
    sweep: &RecordSweep,
    cutoff: i64,
    max: i64,
) -> QueryResult<usize> {
    match conn {
        AnyConnection::Postgresql(pg) => sweep.purge(pg, cutoff, max),
        AnyConnection::Sqlite(sqlite) => diesel::sql_query(
            "DELETE FROM idempotency_records WHERE rowid IN (SELECT rowid FROM (SELECT rowid, \
             stored_at FROM idempotency_records ORDER BY rowid LIMIT ?) WHERE stored_at < ? \
             LIMIT ?)",
        )
        .bind::<BigInt, _>(max.saturating_mul(2))
        .bind::<BigInt, _>(cutoff)
        .bind::<BigInt, _>(max)
        .execute(sqlite),
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_headers, RecordRow};

    #[test]
    fn headers_are_stored_a_line_each_and_read_back_as_they_were() {
        let headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("location".to_owned(), "/v1/pets/42".to_owned()),
            ("retry-after".to_owned(), "1".to_owned()),
        ];
        let encoded = encode_headers(&headers);
        assert_eq!(
            encoded,
            "content-type: application/json\nlocation: /v1/pets/42\nretry-after: 1"
        );
        let row = RecordRow {
            owner: "1".repeat(32),
            key: "a-key".to_owned(),
            fingerprint: vec![7; 32],
            status: 201,
            headers: encoded,
            body: b"{}".to_vec(),
            stored_at: 1,
        };
        let record = row.into_record().expect("a valid row");
        assert_eq!(record.response.headers, headers);
        assert_eq!(encode_headers(&[]), "");
    }
}
