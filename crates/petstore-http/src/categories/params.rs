//! The categories' query and path parameters: `limit` and `cursor` of `listCategories`,
//! `categoryId` of the others; and the `Link` to a listing's next page. Every bad value is a
//! 400 `invalid_parameter` naming the parameter, as for the other listings.

use actix_web::HttpRequest;
use petstore_domain::{CategoryId, PageLimit};

use super::CATEGORIES_PATH;
use crate::error::ApiError;
use crate::wire::cursor::CursorCodec;
use crate::wire::query::{self, LIMIT};

const CURSOR: &str = "cursor";

/// The cursor scope of the category listing: a byte no pet status and no order listing uses,
/// so a cursor of another listing is refused here.
const SCOPE: &[u8] = &[0xFE];

/// What `listCategories` asks for: a page size, and where the page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CategoryListQuery {
    pub(crate) limit: PageLimit,
    pub(crate) after: Option<CategoryId>,
}

/// Reads a `listCategories` query string: `limit` and `cursor`, each at most once; any other
/// parameter is refused, naming it.
pub(crate) fn parse_list(
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<CategoryListQuery, ApiError> {
    let (mut limit, mut cursor) = (None, None);
    for (name, value) in query::pairs(query_string)? {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            CURSOR => &mut cursor,
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listCategories takes `limit` and `cursor`"
                )))
            }
        };
        query::set_once(slot, &name, value)?;
    }
    let limit = query::page_limit(limit.as_deref())?;
    let after = cursor
        .map(|raw| {
            cursors
                .decode_scoped(&raw, SCOPE)
                .and_then(|after| CategoryId::parse(after).ok())
                .ok_or_else(|| {
                    ApiError::invalid_parameter(
                        "query parameter `cursor` is not a cursor this service issued for this \
                         listing; follow the `Link: rel=\"next\"` header of the previous page",
                    )
                })
        })
        .transpose()?;
    Ok(CategoryListQuery { limit, after })
}

/// `Link: <...>; rel="next"` to the page after `query`'s, which ended at `last`.
pub(crate) fn next_page_link(
    query: &CategoryListQuery,
    last: CategoryId,
    cursors: &CursorCodec,
) -> String {
    query::next_link(
        CATEGORIES_PATH,
        [
            (LIMIT, query.limit.get().to_string()),
            (CURSOR, cursors.encode_scoped(last.get(), SCOPE)),
        ],
    )
}

/// The `categoryId` path parameter.
pub(crate) fn category_id(req: &HttpRequest) -> Result<CategoryId, ApiError> {
    let raw = req.match_info().get("categoryId").unwrap_or_default();
    CategoryId::parse_text(raw).ok_or_else(|| {
        ApiError::invalid_parameter(format!(
            "path parameter `categoryId` must be an integer from {} to {} written as \
                 digits (got `{raw}`)",
            CategoryId::MIN,
            CategoryId::MAX
        ))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    fn cursors() -> CursorCodec {
        CursorCodec::new(b"a secret for the category listing tests")
    }

    fn refused(query_string: &str, naming: &str) {
        let err = parse_list(query_string, &cursors()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter, "{query_string}");
        assert!(
            err.message().contains(naming),
            "{query_string}: {}",
            err.message()
        );
    }

    #[test]
    fn bad_duplicate_and_unknown_parameters_are_refused_naming_them() {
        refused("limit=0", "`limit`");
        refused("limit=101", "`limit`");
        refused("limit=5&limit=6", "`limit` must be given at most once");
        refused("name=Dogs", "unknown query parameter `name`");
        refused("cursor=abc", "`cursor`");
    }

    #[test]
    fn the_next_link_carries_a_cursor_of_this_listing_only() {
        let first = parse_list("limit=2", &cursors()).unwrap();
        let last = CategoryId::parse(41).unwrap();
        let link = next_page_link(&first, last, &cursors());
        let target = link
            .strip_prefix("</v1/categories?")
            .and_then(|rest| rest.strip_suffix(">; rel=\"next\""))
            .unwrap();
        assert!(target.starts_with("limit=2&cursor="), "{link}");
        let next = parse_list(target, &cursors()).unwrap();
        assert_eq!(next.after, Some(last));
        assert_eq!(next.limit, first.limit);

        // A pet listing's cursor (scoped by its status byte) is not this listing's.
        let pets_cursor = cursors().encode(petstore_domain::PetId::new(41), None);
        refused(&format!("cursor={pets_cursor}"), "`cursor`");
    }
}
