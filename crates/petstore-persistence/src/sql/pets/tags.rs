//! `pet_tags`: each pet's tags again, one row per tag, keyed by tag, so the listing's `tag`
//! filter reads one range of the key in id order. Each row carries its pet's category and
//! status, so a tag with either reads only the rows it answers. Written with the pet, in its
//! transaction; a change of the pet's category or status alone (an order's) reaches its rows
//! by the database's trigger (the migration `tag_rows_carry_category_and_status`).
//!
//! On PostgreSQL, where each statement is a round trip, a create writes its tag rows in the
//! statement that inserts the pets (`batch_insert.rs`), and a change in one statement
//! whatever the number of tags. SQLite, in process, takes them in multi-row inserts
//! (`engine/multi_row.rs`).

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Text};
use diesel::sqlite::Sqlite;
use petstore_domain::Pet;

use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::multi_row::{in_parts, BindValues, MultiRow};
use crate::sql::schema::pet_tags;

/// One row of `pet_tags`, for SQLite's multi-row insert.
struct TagRow<'a> {
    tag: &'a str,
    pet_id: i64,
    category_id: i64,
    status: &'static str,
}

impl BindValues<Sqlite> for TagRow<'_> {
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_bind_param::<Text, str>(self.tag)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.pet_id)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.category_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(self.status)
    }
}

/// PostgreSQL: `INSERT INTO pet_tags` of any number of rows in one statement of fixed text, the
/// rows bound as one array a column: one round trip, and a statement that stays prepared and is
/// found by its type.
struct TagArrays<'a> {
    tags: Vec<&'a str>,
    pet_ids: Vec<i64>,
    category_ids: Vec<i64>,
    statuses: Vec<&'static str>,
}

impl QueryFragment<Pg> for TagArrays<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "INSERT INTO pet_tags (tag, pet_id, category_id, status) SELECT * FROM unnest(",
        );
        out.push_bind_param::<Array<Text>, Vec<&str>>(&self.tags)?;
        out.push_sql("::text[], ");
        out.push_bind_param::<Array<BigInt>, Vec<i64>>(&self.pet_ids)?;
        out.push_sql("::bigint[], ");
        out.push_bind_param::<Array<BigInt>, Vec<i64>>(&self.category_ids)?;
        out.push_sql("::bigint[], ");
        out.push_bind_param::<Array<Text>, Vec<&str>>(&self.statuses)?;
        out.push_sql("::text[])");
        Ok(())
    }
}

impl QueryId for TagArrays<'_> {
    type QueryId = TagArrays<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<Conn> RunQueryDsl<Conn> for TagArrays<'_> {}

/// Stores the tags of `pets`, just stored.
pub(crate) fn insert<'a>(
    conn: &mut AnyConnection,
    pets: impl Iterator<Item = &'a Pet>,
) -> QueryResult<()> {
    let rows: Vec<TagRow<'_>> = pets
        .flat_map(|pet| {
            let pet_id = pet.id().get();
            let category_id = pet.category_id().get();
            let status = pet.status().as_str();
            pet.details().tags.as_slice().iter().map(move |tag| TagRow {
                tag: tag.as_str(),
                pet_id,
                category_id,
                status,
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    match conn {
        AnyConnection::Postgresql(pg) => TagArrays {
            tags: rows.iter().map(|row| row.tag).collect(),
            pet_ids: rows.iter().map(|row| row.pet_id).collect(),
            category_ids: rows.iter().map(|row| row.category_id).collect(),
            statuses: rows.iter().map(|row| row.status).collect(),
        }
        .execute(pg)
        .map(drop),
        AnyConnection::Sqlite(sqlite) => {
            for part in in_parts(&rows) {
                MultiRow {
                    head: "INSERT INTO pet_tags (tag, pet_id, category_id, status)",
                    rows: part,
                    tail: "",
                }
                .execute(sqlite)?;
            }
            Ok(())
        }
    }
}

/// Removes every tag row of pet `pet_id`.
pub(crate) fn delete_of(conn: &mut AnyConnection, pet_id: i64) -> QueryResult<()> {
    diesel::delete(pet_tags::table.filter(pet_tags::pet_id.eq(pet_id)))
        .execute(conn)
        .map(drop)
}

/// Replaces pet `pet`'s tag rows by its tags now.
pub(crate) fn replace(conn: &mut AnyConnection, pet: &Pet) -> QueryResult<()> {
    delete_of(conn, pet.id().get())?;
    insert(conn, std::iter::once(pet))
}
