//! PostgreSQL's insert of a group of new pets: one statement of one shape for any group size,
//! its values one array per column, that stores the pets, their tag rows and their
//! `pet.created` events and returns the inserted rows. Each statement is a round trip, and the
//! insert turn is held until the commit; a `VALUES` list would take one statement per
//! power-of-two part of the group (`multi_row`), and an expression per value for the executor
//! to set up at every execution.

use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Nullable, Text, Untyped};

use super::new_pet_values::PetValues;
use super::pet_row::PetRow;

/// The statement around the arrays. Tag rows are each pet's `tags` split at its line breaks,
/// with the pet's category and status. An event's payload is the pet's row as JSON, as
/// [`PetRow::event`] writes it: `row_to_json` of the returned row, whose columns are the row's
/// fields in their order (cheaper than naming each member with `json_build_object`,
/// `docs/benchmarks.md`). Its id is `evt_` and the 122 random bits of a version 4 UUID in hex;
/// its time is bound between `TAIL` and `END`.
const HEAD: &str = "WITH inserted AS (INSERT INTO pets (name, category_id, status, price_minor, \
     price_currency, description, photo_urls, tags, name_folded) SELECT";
const TAIL: &str =
    "RETURNING id, name, category_id, status, version, price_minor, price_currency, \
     description, photo_urls, tags), \
     tagged AS (INSERT INTO pet_tags (tag, pet_id, category_id, status) \
     SELECT tag, inserted.id, inserted.category_id, inserted.status \
     FROM inserted, unnest(string_to_array(inserted.tags, chr(10))) AS tag), \
     created AS (INSERT INTO events (id, type, occurred_at, order_audience, data) \
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), 'pet.created',";
const END: &str = ", NULL, row_to_json(inserted)::text FROM inserted ORDER BY id) \
     SELECT id, name, category_id, status, version, price_minor, price_currency, description, \
     photo_urls, tags FROM inserted";

/// A group's new pets, one array per column, in the insert's column order.
pub(crate) struct PetColumns<'a> {
    names: Vec<&'a str>,
    category_ids: Vec<i64>,
    statuses: Vec<&'a str>,
    price_minors: Vec<Option<i64>>,
    price_currencies: Vec<Option<&'a str>>,
    descriptions: Vec<Option<&'a str>>,
    photo_urls: Vec<Option<&'a str>>,
    tags: Vec<Option<&'a str>>,
    names_folded: Vec<&'a str>,
    /// When the events occurred.
    occurred_at: i64,
}

impl<'a> PetColumns<'a> {
    pub(crate) fn of(rows: &'a [PetValues<'a>], occurred_at: i64) -> Self {
        Self {
            names: rows.iter().map(|row| row.name).collect(),
            category_ids: rows.iter().map(|row| row.category_id).collect(),
            statuses: rows.iter().map(|row| row.status).collect(),
            price_minors: rows.iter().map(|row| row.details.price_minor).collect(),
            price_currencies: rows.iter().map(|row| row.details.price_currency).collect(),
            descriptions: rows.iter().map(|row| row.details.description).collect(),
            photo_urls: rows
                .iter()
                .map(|row| row.details.photo_urls.as_deref())
                .collect(),
            tags: rows.iter().map(|row| row.details.tags.as_deref()).collect(),
            names_folded: rows.iter().map(|row| row.name_folded.as_str()).collect(),
            occurred_at,
        }
    }

    /// Inserts the pets, their tag rows and their events; the inserted rows, in no set order.
    pub(crate) fn insert(self, pg: &mut PgConnection) -> QueryResult<Vec<PetRow>> {
        self.load(pg)
    }
}

impl QueryFragment<Pg> for PetColumns<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // `unnest` in the select list, not in `FROM`: the arrays are read in step, row by row,
        // where `FROM unnest(...)` first copies every row into a tuplestore.
        out.push_sql(HEAD);
        out.push_sql(" unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.names)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<BigInt>, _>(&self.category_ids)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.statuses)?;
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Nullable<BigInt>>, _>(&self.price_minors)?;
        for texts in [
            &self.price_currencies,
            &self.descriptions,
            &self.photo_urls,
            &self.tags,
        ] {
            out.push_sql("), unnest(");
            out.push_bind_param::<Array<Nullable<Text>>, _>(texts)?;
        }
        out.push_sql("), unnest(");
        out.push_bind_param::<Array<Text>, _>(&self.names_folded)?;
        out.push_sql(") ");
        out.push_sql(TAIL);
        out.push_sql(" ");
        out.push_bind_param::<BigInt, i64>(&self.occurred_at)?;
        out.push_sql(END);
        Ok(())
    }
}

impl QueryId for PetColumns<'_> {
    type QueryId = ();
    // One text; diesel keys its cache by it.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for PetColumns<'_> {
    type SqlType = Untyped;
}

impl RunQueryDsl<PgConnection> for PetColumns<'_> {}
