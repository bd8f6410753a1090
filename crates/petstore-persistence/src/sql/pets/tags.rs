//! `pet_tags`: each pet's tags again, one row per tag, keyed by tag, so the listing's `tag`
//! filter reads one range of the key in id order. Written with the pet, in its transaction.

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::AstPass;
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Text};
use petstore_domain::Pet;

use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::multi_row::{in_parts, BindValues, MultiRow};
use crate::sql::schema::pet_tags;

/// One row of `pet_tags`.
struct TagRow<'a> {
    tag: &'a str,
    pet_id: i64,
}

impl<DB> BindValues<DB> for TagRow<'_>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt>,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
{
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_bind_param::<Text, str>(self.tag)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.pet_id)
    }
}

/// Stores the tags of `pets`, just stored.
pub(crate) fn insert<'a>(
    conn: &mut AnyConnection,
    pets: impl Iterator<Item = &'a Pet>,
) -> QueryResult<()> {
    let rows: Vec<TagRow<'_>> = pets
        .flat_map(|pet| {
            let pet_id = pet.id().get();
            pet.details().tags.as_slice().iter().map(move |tag| TagRow {
                tag: tag.as_str(),
                pet_id,
            })
        })
        .collect();
    for part in in_parts(&rows) {
        let insert = MultiRow {
            head: "INSERT INTO pet_tags (tag, pet_id)",
            rows: part,
            tail: "",
            tail_bind: None,
            end: "",
        };
        match conn {
            AnyConnection::Postgresql(pg) => insert.execute(pg),
            AnyConnection::Sqlite(sqlite) => insert.execute(sqlite),
        }?;
    }
    Ok(())
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
