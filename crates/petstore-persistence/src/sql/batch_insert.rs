//! Storing a batch of new pets in one write transaction: one statement, one commit (one fsync),
//! ids visible in order. A row the database refuses is set apart so the rest of the batch is
//! stored all the same.

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Text};
use petstore_application::RepositoryError;
use petstore_domain::{NewPet, Pet};

use super::connection::AnyConnection;
use super::errors::{self, Detail};
use super::pet_row::PetRow;
use super::schema::pets;
use super::write_transaction::{in_write_transaction, WriteFailure};

/// Key of the PostgreSQL advisory lock inserts take turns on: "pets_ids" in ASCII, distinct from
/// the migration lock's key.
const INSERT_LOCK_KEY: i64 = 0x7065_7473_5f69_6473;

/// What each pet of a batch became, in the batch's order.
pub(crate) type Outcomes = Vec<Result<Pet, RepositoryError>>;

/// Stores `batch` in one transaction. `Err` means the whole batch failed and nothing of it is
/// stored; `Ok` holds each pet's own outcome, where a pet the database refused (a constraint, a
/// trigger) fails alone and every other one is stored.
pub(crate) fn insert_batch(
    conn: &mut AnyConnection,
    batch: &[NewPet],
) -> Result<Outcomes, WriteFailure> {
    match in_write_transaction(conn, take_turn_to_insert, |conn| insert_all(conn, batch)) {
        Ok(rows) => Ok(assign(batch, rows)),
        // A full disk or a read-only file fails every row alike: the whole batch fails.
        Err(WriteFailure::Statement(error))
            if !errors::is_unavailable(&error) && errors::fault_of(&error).is_none() =>
        {
            if batch.len() == 1 {
                return Ok(vec![Err(errors::from_query(error))]);
            }
            // Some row was refused, but which one the database does not say: store them one
            // by one, each behind a savepoint, so only the refused ones fail.
            in_write_transaction(conn, take_turn_to_insert, |conn| {
                Ok(batch
                    .iter()
                    .map(|new_pet| {
                        conn.transaction(|conn| insert_one(conn, new_pet))
                            .map_err(errors::from_query)
                            .and_then(PetRow::into_pet)
                    })
                    .collect())
            })
        }
        Err(failure) => Err(failure),
    }
}

/// The columns of one new pet, as `INSERT` takes them.
type PetValues<'a> = (
    diesel::dsl::Eq<pets::name, &'a str>,
    diesel::dsl::Eq<pets::category_id, i64>,
    diesel::dsl::Eq<pets::status, &'a str>,
);

fn values(new_pet: &NewPet) -> PetValues<'_> {
    (
        pets::name.eq(new_pet.name().as_str()),
        pets::category_id.eq(new_pet.category_id().get()),
        pets::status.eq(new_pet.status().as_str()),
    )
}

/// One `INSERT ... VALUES (...), (...) RETURNING ...` for the whole batch. Written as SQL
/// because diesel's multi-backend connection cannot build a multi-row insert; the statement
/// differs only in its placeholders (`$n` on PostgreSQL, `?` on SQLite).
fn insert_all(conn: &mut AnyConnection, batch: &[NewPet]) -> QueryResult<Vec<PetRow>> {
    match conn {
        AnyConnection::Postgresql(pg) => {
            let sql = multi_row_insert(batch.len(), |n| format!("${n}"));
            bind_all(diesel::sql_query(sql).into_boxed(), batch).load(pg)
        }
        AnyConnection::Sqlite(sqlite) => {
            let sql = multi_row_insert(batch.len(), |_| "?".to_owned());
            bind_all(diesel::sql_query(sql).into_boxed(), batch).load(sqlite)
        }
    }
}

fn multi_row_insert(rows: usize, placeholder: impl Fn(usize) -> String) -> String {
    let mut sql = String::from("INSERT INTO pets (name, category_id, status) VALUES ");
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        let first = row * 3 + 1;
        sql.push_str(&format!(
            "({}, {}, {})",
            placeholder(first),
            placeholder(first + 1),
            placeholder(first + 2)
        ));
    }
    sql.push_str(" RETURNING id, name, category_id, status");
    sql
}

fn bind_all<'a, DB>(
    mut query: BoxedSqlQuery<'a, DB, SqlQuery>,
    batch: &'a [NewPet],
) -> BoxedSqlQuery<'a, DB, SqlQuery>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt>,
    &'a str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
{
    for new_pet in batch {
        query = query
            .bind::<Text, _>(new_pet.name().as_str())
            .bind::<BigInt, _>(new_pet.category_id().get())
            .bind::<Text, _>(new_pet.status().as_str());
    }
    query
}

fn insert_one(conn: &mut AnyConnection, new_pet: &NewPet) -> QueryResult<PetRow> {
    diesel::insert_into(pets::table)
        .values(values(new_pet))
        .returning(PetRow::COLUMNS)
        .get_result(conn)
}

/// Pairs each requested pet with a row that stores it. A multi-row `RETURNING` is not promised
/// in `VALUES` order, so rows are matched by content, lowest id first (equal pets are
/// interchangeable; each gets an id of its own).
fn assign(batch: &[NewPet], rows: Vec<PetRow>) -> Outcomes {
    let mut rows: Vec<Option<PetRow>> = {
        let mut sorted = rows;
        sorted.sort_unstable_by_key(|row| row.id);
        sorted.into_iter().map(Some).collect()
    };
    batch
        .iter()
        .map(|new_pet| {
            rows.iter_mut()
                .find(|slot| slot.as_ref().is_some_and(|row| row.holds(new_pet)))
                .and_then(Option::take)
                .ok_or_else(|| {
                    RepositoryError::Unexpected(Box::new(Detail(
                        "the database returned no row for an inserted pet".to_owned(),
                    )))
                })
                .and_then(PetRow::into_pet)
        })
        .collect()
}

/// Makes ids become visible in the order they are handed out, so paging by "ids after the last
/// one seen" never steps over a pet.
///
/// PostgreSQL takes an identity value when the row is inserted but shows the row only at commit,
/// so of two concurrent inserts the one with the higher id can commit first; a page read between
/// the two commits ends past the lower id, and the next page starts after it. A
/// transaction-scoped advisory lock, taken before the insert and released after the commit is
/// visible, lets one insert transaction at a time run, across every instance on the database.
/// Each instance stores its creates in groups (see `group_commit.rs`), so one turn stores many
/// pets; reads never take the lock. SQLite needs nothing: `BEGIN IMMEDIATE` already admits one
/// writer at a time.
fn take_turn_to_insert(conn: &mut AnyConnection) -> QueryResult<()> {
    match conn {
        AnyConnection::Postgresql(pg) => {
            diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                .bind::<BigInt, _>(INSERT_LOCK_KEY)
                .execute(pg)?;
            Ok(())
        }
        AnyConnection::Sqlite(_) => Ok(()),
    }
}
