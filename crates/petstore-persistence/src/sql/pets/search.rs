//! A page of the listing with search filters (a category, a tag, the start of a name), besides
//! the plain pages by status that `group_read::load_page` serves, each served by an index
//! (`pets_category_live`, `pet_tags (tag, pet_id)`, `pet_tags_tag_category`,
//! `pets_name_folded_live`), and the pages of a search by name in name order.
//!
//! The searches a shop asks most (a category, a tag, both, each with or without a status; a
//! name alone) are statements of fixed types run on the concrete connection, as plain pages are:
//! each stays prepared and is found in the statement cache by its type, where a statement built
//! per call has its SQL written out to be found. Other combinations are built from the filters
//! given.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};
use petstore_domain::PetSearch;

use super::pet_row::PetRow;
use crate::sql::engine::connection::{on_connection, AnyConnection};
use crate::sql::schema::{pet_tags, pets};

type AnyBackend = <AnyConnection as Connection>::Backend;

/// Loads the fixed statement `$query` on the concrete connection, with `$column = $status` when
/// a status is given: two statements, each of its own type.
macro_rules! load_with_status {
    ($conn:expr, $status:expr, $column:expr, $query:expr) => {
        match $status {
            Some(status) => {
                let query = $query.filter($column.eq(status));
                on_connection!($conn, |c| query.load::<PetRow>(c))
            }
            None => {
                let query = $query;
                on_connection!($conn, |c| query.load::<PetRow>(c))
            }
        }
    };
}

/// The live pets after id `after`, with `status` when given, matching `search`, in id order, at
/// most `limit`. A tag is read from the tag's rows of `pet_tags` (in pet id order, so the scan
/// stops at the page's end): by its key alone, or with a category by `pet_tags_tag_category`,
/// the status checked in the tag row; a category alone from `pets_category_live`, the status
/// checked in the index. The listing asks a search by name without a tag
/// of [`name_page`] instead, in name order; here a name only narrows a scan in id order.
pub(crate) fn search_page(
    conn: &mut AnyConnection,
    status: Option<&'static str>,
    search: &PetSearch,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<PetRow>> {
    if search.name.is_some() {
        return narrowed_page(conn, status, search, after, limit);
    }
    match (&search.tag, search.category_id) {
        // The status is written so that no index can serve it (an expression of the column):
        // `pets_category_live` holds each pet's status beside its id, where `pets_status_id`
        // would read the status's pets of every category.
        (None, Some(category_id)) => load_with_status!(
            conn,
            status,
            pets::status.concat(""),
            pets::table
                .select(PetRow::COLUMNS)
                .filter(pets::category_id.eq(category_id.get()))
                .filter(pets::removed_at.is_null())
                .filter(pets::id.gt(after))
                .order(pets::id.asc())
                .limit(limit)
        ),
        (Some(tag), None) => load_with_status!(
            conn,
            status,
            pet_tags::status,
            pet_tags::table
                .inner_join(pets::table.on(pets::id.eq(pet_tags::pet_id)))
                .select(PetRow::COLUMNS)
                .filter(pet_tags::tag.eq(tag.as_str().to_owned()))
                .filter(pet_tags::pet_id.gt(after))
                .filter(pets::removed_at.is_null())
                .order(pet_tags::pet_id.asc())
                .limit(limit)
        ),
        (Some(tag), Some(category_id)) => load_with_status!(
            conn,
            status,
            pet_tags::status,
            pet_tags::table
                .inner_join(pets::table.on(pets::id.eq(pet_tags::pet_id)))
                .select(PetRow::COLUMNS)
                .filter(pet_tags::tag.eq(tag.as_str().to_owned()))
                .filter(pet_tags::category_id.eq(category_id.get()))
                .filter(pet_tags::pet_id.gt(after))
                .filter(pets::removed_at.is_null())
                .order(pet_tags::pet_id.asc())
                .limit(limit)
        ),
        (None, None) => narrowed_page(conn, status, search, after, limit),
    }
}

/// [`search_page`] for a search with a name: one query built from the filters given.
fn narrowed_page(
    conn: &mut AnyConnection,
    status: Option<&'static str>,
    search: &PetSearch,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<PetRow>> {
    let name_range = name_range(search);
    // The filters every shape applies to its `pets` columns, written once: the shapes' boxed
    // queries select and join differently, so they share no type a function could take.
    macro_rules! narrowed {
        ($query:expr) => {{
            let mut query = $query;
            if let Some(status) = status {
                query = query.filter(pets::status.eq(status));
            }
            if let Some(category_id) = search.category_id {
                query = query.filter(pets::category_id.eq(category_id.get()));
            }
            if let Some((prefix, end)) = name_range.clone() {
                query = query.filter(pets::name_folded.ge(prefix));
                if let Some(end) = end {
                    query = query.filter(pets::name_folded.lt(end));
                }
            }
            query
        }};
    }
    if let Some(tag) = &search.tag {
        return narrowed!(pet_tags::table
            .inner_join(pets::table.on(pets::id.eq(pet_tags::pet_id)))
            .select(PetRow::COLUMNS)
            .filter(pet_tags::tag.eq(tag.as_str().to_owned()))
            .filter(pet_tags::pet_id.gt(after))
            .filter(pets::removed_at.is_null())
            .order(pet_tags::pet_id.asc())
            .limit(limit)
            .into_boxed::<AnyBackend>())
        .load(conn);
    }
    // A category (and a status, or a name): `pets_category_live` is in id order already.
    narrowed!(pets::table
        .select(PetRow::COLUMNS)
        .filter(pets::removed_at.is_null())
        .filter(pets::id.gt(after))
        .order(pets::id.asc())
        .limit(limit)
        .into_boxed::<AnyBackend>())
    .load(conn)
}

/// The range of folded names that start with `search`'s name: from the prefix, up to the
/// string after all of them (none when no string is).
fn name_range(search: &PetSearch) -> Option<(String, Option<String>)> {
    search.name.as_ref().map(|name| {
        let prefix = name.as_str().to_owned();
        let end = after_prefix(&prefix);
        (prefix, end)
    })
}

/// The live pets whose folded name starts with `search`'s name, after `after` in (folded name,
/// id) order, with `status` and `search`'s category when given, at most `limit`: a range of
/// `pets (name_folded, id)` read in its own order, so a page reads about its own rows however
/// many names match. `search` has a name and no tag ([`PetSearch::in_name_order`]).
pub(crate) fn name_page(
    conn: &mut AnyConnection,
    status: Option<&'static str>,
    search: &PetSearch,
    after: Option<(String, i64)>,
    limit: i64,
) -> QueryResult<Vec<PetRow>> {
    let (prefix, end) = name_range(search).unwrap_or_default();
    if let (None, None, Some(end)) = (status, search.category_id, &end) {
        let range = pets::table
            .select(PetRow::COLUMNS)
            .filter(pets::removed_at.is_null())
            .filter(pets::name_folded.ge(prefix.clone()))
            .filter(pets::name_folded.lt(end.clone()))
            .order((pets::name_folded.asc(), pets::id.asc()))
            .limit(limit);
        return match after {
            Some((name, id)) => {
                let query = range.filter(AfterNamePosition { name, id });
                on_connection!(conn, |c| query.load::<PetRow>(c))
            }
            None => on_connection!(conn, |c| range.load::<PetRow>(c)),
        };
    }
    let mut query = pets::table
        .select(PetRow::COLUMNS)
        .filter(pets::removed_at.is_null())
        .filter(pets::name_folded.ge(prefix))
        .order((pets::name_folded.asc(), pets::id.asc()))
        .limit(limit)
        .into_boxed::<AnyBackend>();
    if let Some(end) = end {
        query = query.filter(pets::name_folded.lt(end));
    }
    if let Some((name, id)) = after {
        // A row value: both databases read it as one position in the index's order.
        query = query.filter(
            sql::<Bool>("(name_folded, id) > (")
                .bind::<Text, _>(name)
                .sql(", ")
                .bind::<BigInt, _>(id)
                .sql(")"),
        );
    }
    // The status and the category are written so that no index can serve them (an expression
    // of the column): a planner that read a category's or a status's pets and sorted them by
    // name would read all of them for every page, where the name's range in order stops at the
    // page's end.
    if let Some(status) = status {
        query = query.filter(sql::<Bool>("(status || '') = ").bind::<Text, _>(status));
    }
    if let Some(category_id) = search.category_id {
        query =
            query.filter(sql::<Bool>("(category_id + 0) = ").bind::<BigInt, _>(category_id.get()));
    }
    query.load(conn)
}

/// `(name_folded, id) > (name, id)`: a row value, which both databases read as one position in
/// the order of `pets (name_folded, id)`. A fixed statement (unlike a literal of SQL) that stays
/// prepared.
#[derive(Debug, Clone, diesel::query_builder::QueryId)]
struct AfterNamePosition {
    name: String,
    id: i64,
}

impl Expression for AfterNamePosition {
    type SqlType = Bool;
}

impl AppearsOnTable<pets::table> for AfterNamePosition {}

impl diesel::expression::ValidGrouping<()> for AfterNamePosition {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}

impl<DB> diesel::query_builder::QueryFragment<DB> for AfterNamePosition
where
    DB: diesel::backend::Backend
        + diesel::sql_types::HasSqlType<Text>
        + diesel::sql_types::HasSqlType<BigInt>,
    String: diesel::serialize::ToSql<Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> QueryResult<()> {
        out.push_sql("(name_folded, id) > (");
        out.push_bind_param::<Text, String>(&self.name)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.id)?;
        out.push_sql(")");
        Ok(())
    }
}

/// The least string above every string that starts with `prefix` (compared by code point, as
/// both databases compare the column): `prefix` with its last character one higher.
fn after_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            last => char::from_u32(u32::from(last) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::after_prefix;

    #[test]
    fn the_end_of_a_prefix_range_is_the_prefix_one_character_higher() {
        assert_eq!(after_prefix("rex").as_deref(), Some("rey"));
        assert_eq!(after_prefix("zoë").as_deref(), Some("zoì"));
        assert_eq!(after_prefix("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        assert_eq!(after_prefix("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(after_prefix("\u{10FFFF}"), None);
        let end = after_prefix("rex").unwrap();
        for inside in ["rex", "rex junior", "rex\u{10FFFF}"] {
            assert!(inside < end.as_str(), "{inside}");
        }
    }
}
