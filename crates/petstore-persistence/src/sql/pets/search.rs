//! A page of the listing with search filters (a category, a tag, the start of a name), besides
//! the plain pages by status that `group_read::load_page` serves: one query built from the
//! filters given, each served by an index (`pets (category_id, id)`, `pet_tags (tag, pet_id)`,
//! `pets (name_folded, id)`).

use diesel::prelude::*;
use petstore_domain::PetSearch;

use super::pet_row::PetRow;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::schema::{pet_tags, pets};

type AnyBackend = <AnyConnection as Connection>::Backend;

/// The live pets after id `after`, with `status` when given, matching `search`, in id order, at
/// most `limit`.
pub(crate) fn search_page(
    conn: &mut AnyConnection,
    status: Option<&'static str>,
    search: &PetSearch,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<PetRow>> {
    let mut query = pets::table
        .select(PetRow::COLUMNS)
        .filter(pets::removed_at.is_null())
        .filter(pets::id.gt(after))
        .order(pets::id.asc())
        .limit(limit)
        .into_boxed::<AnyBackend>();
    if let Some(status) = status {
        query = query.filter(pets::status.eq(status));
    }
    if let Some(category_id) = search.category_id {
        query = query.filter(pets::category_id.eq(category_id.get()));
    }
    if let Some(tag) = &search.tag {
        let tagged = pet_tags::table
            .filter(pet_tags::tag.eq(tag.as_str().to_owned()))
            .filter(pet_tags::pet_id.gt(after))
            .select(pet_tags::pet_id);
        query = query.filter(pets::id.eq_any(tagged));
    }
    if let Some(name) = &search.name {
        let prefix = name.as_str().to_owned();
        query = match after_prefix(&prefix) {
            Some(end) => query.filter(pets::name_folded.ge(prefix).and(pets::name_folded.lt(end))),
            None => query.filter(pets::name_folded.ge(prefix)),
        };
    }
    query.load(conn)
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
