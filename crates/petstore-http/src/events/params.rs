//! The feed's query parameters: `limit`, `types` and `cursor` of `listEvents`; and the `Link` to
//! where the next read starts. Every bad value is a 400 `invalid_parameter` naming the
//! parameter, as for the other listings.
//!
//! A cursor is bound to the key that read the page and to `types`: another key's cursor, or one
//! sent with other types, is refused, so a cursor never carries one key's view of the feed to
//! another.

use petstore_domain::{EventType, EventTypes, FeedPosition, KeyId, PageLimit};

use super::EVENTS_PATH;
use crate::error::ApiError;
use crate::wire::cursor::CursorCodec;
use crate::wire::query::{self, LIMIT};

const CURSOR: &str = "cursor";
const TYPES: &str = "types";

/// The first byte of the feed's cursor scope: no pet status, order listing or category listing
/// uses it.
const SCOPE_BYTE: u8 = 0xFD;

/// What `listEvents` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventListQuery {
    pub(crate) limit: PageLimit,
    /// The types as sent (for the next link), or `None` for every type.
    pub(crate) types_text: Option<String>,
    pub(crate) types: EventTypes,
    pub(crate) after: Option<FeedPosition>,
}

/// The scope of `key`'s cursors for `types`.
fn scope(key: &KeyId, types: EventTypes) -> Vec<u8> {
    let mut scope = Vec::with_capacity(3 + key.as_str().len());
    scope.push(SCOPE_BYTE);
    scope.extend_from_slice(&types.bits().to_be_bytes());
    scope.extend_from_slice(key.as_str().as_bytes());
    scope
}

/// Reads a `listEvents` query string for the key `key`: `limit`, `types` and `cursor`, each at
/// most once; any other parameter is refused, naming it.
pub(crate) fn parse_list(
    query_string: &str,
    key: &KeyId,
    cursors: &CursorCodec,
) -> Result<EventListQuery, ApiError> {
    let (mut limit, mut types, mut cursor) = (None, None, None);
    for (name, value) in query::pairs(query_string)? {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            TYPES => &mut types,
            CURSOR => &mut cursor,
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listEvents takes `limit`, `types` and \
                     `cursor`"
                )))
            }
        };
        query::set_once(slot, &name, value)?;
    }
    let limit = query::page_limit(limit.as_deref())?;
    let parsed_types = match &types {
        None => EventTypes::EVERY,
        Some(raw) => EventTypes::parse_list(raw).map_err(|_| {
            ApiError::invalid_parameter(format!(
                "query parameter `types` must be a comma-separated list of event types (or \
                 `pet.*`, `order.*`, `category.*`); the types are {}",
                EventType::ALL.map(EventType::as_str).join(", ")
            ))
        })?,
    };
    let after = cursor
        .map(|raw| {
            cursors
                .decode_position(&raw, &scope(key, parsed_types))
                .map(|(commit, sequence)| FeedPosition::new(commit, sequence))
                .ok_or_else(|| {
                    ApiError::invalid_parameter(
                        "query parameter `cursor` is not a cursor this service issued to this \
                         API key for these `types`; follow the `Link: rel=\"next\"` header of \
                         the previous page",
                    )
                })
        })
        .transpose()?;
    Ok(EventListQuery {
        limit,
        types_text: types,
        types: parsed_types,
        after,
    })
}

/// `Link: <...>; rel="next"` to where the read after `query`'s starts: `next`.
pub(crate) fn next_page_link(
    query: &EventListQuery,
    next: FeedPosition,
    key: &KeyId,
    cursors: &CursorCodec,
) -> String {
    let cursor = cursors.encode_position(next.commit, next.sequence, &scope(key, query.types));
    let types = query.types_text.iter().map(|text| (TYPES, text.clone()));
    query::next_link(
        EVENTS_PATH,
        std::iter::once((LIMIT, query.limit.get().to_string()))
            .chain(types)
            .chain(std::iter::once((CURSOR, cursor))),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use utoipa::OpenApi as _;

    use super::*;
    use crate::error::ErrorCode;

    /// The pattern `types` follows, made from the event types themselves.
    fn types_pattern() -> String {
        let resources = ["pet", "order", "category"];
        let one = resources
            .iter()
            .map(|resource| {
                let actions: Vec<&str> = EventType::ALL
                    .into_iter()
                    .filter(|kind| kind.resource() == *resource)
                    .filter_map(|kind| kind.as_str().split_once('.').map(|(_, action)| action))
                    .collect();
                format!("{resource}\\.(\\*|{})", actions.join("|"))
            })
            .collect::<Vec<_>>()
            .join("|");
        format!("^({one})(,({one}))*$")
    }

    #[test]
    fn the_documented_pattern_of_types_names_every_type_and_no_other() {
        let document = serde_json::to_value(super::super::EventsApi::openapi()).unwrap();
        let parameters = document["paths"]["/events"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let types = parameters
            .iter()
            .find(|parameter| parameter["name"] == "types")
            .unwrap();
        assert_eq!(types["schema"]["pattern"], types_pattern());
        let pattern = regex::Regex::new(&types_pattern()).unwrap();
        for accepted in [
            "pet.*",
            "order.delivered,category.*",
            "pet.created,pet.created",
        ] {
            assert!(pattern.is_match(accepted), "{accepted}");
            assert!(EventTypes::parse_list(accepted).is_ok(), "{accepted}");
        }
        for refused in ["pet.placed", "pet.*,", "", "shop.*"] {
            assert!(!pattern.is_match(refused), "{refused}");
        }
    }

    fn codec() -> CursorCodec {
        CursorCodec::new(b"a secret long enough for the test")
    }

    fn key(digit: char) -> KeyId {
        KeyId::parse(&digit.to_string().repeat(32)).unwrap()
    }

    fn cursor_of(link: &str) -> String {
        let start = link.find("cursor=").unwrap() + "cursor=".len();
        link[start..link.find('>').unwrap()].to_owned()
    }

    #[test]
    fn the_next_link_carries_limit_types_and_a_cursor_for_this_key() {
        let first = parse_list("limit=5&types=pet.*", &key('a'), &codec()).unwrap();
        assert_eq!(first.after, None);
        let link = next_page_link(&first, FeedPosition::new(0, 9), &key('a'), &codec());
        assert!(
            link.starts_with("</v1/events?limit=5&types=pet.%2A&cursor="),
            "{link}"
        );
        let next = parse_list(
            &format!("types=pet.*&cursor={}", cursor_of(&link)),
            &key('a'),
            &codec(),
        )
        .unwrap();
        assert_eq!(next.after, Some(FeedPosition::new(0, 9)));
    }

    #[test]
    fn another_keys_cursor_or_other_types_are_refused() {
        let query = parse_list("", &key('a'), &codec()).unwrap();
        let link = next_page_link(&query, FeedPosition::new(3, 4), &key('a'), &codec());
        let cursor = cursor_of(&link);
        for (query_string, reader) in [
            (format!("cursor={cursor}"), key('b')),
            (format!("types=pet.created&cursor={cursor}"), key('a')),
        ] {
            let refused = parse_list(&query_string, &reader, &codec()).unwrap_err();
            assert_eq!(refused.code(), ErrorCode::InvalidParameter);
            assert!(
                refused.message().contains("`cursor`"),
                "{}",
                refused.message()
            );
        }
    }

    #[test]
    fn bad_types_and_unknown_parameters_are_refused_naming_them() {
        for (query_string, named) in [
            ("types=pet.sold", "`types`"),
            ("types=", "`types`"),
            ("since=1", "`since`"),
            ("limit=0", "`limit`"),
        ] {
            let refused = parse_list(query_string, &key('a'), &codec()).unwrap_err();
            assert!(
                refused.message().contains(named),
                "{query_string}: {}",
                refused.message()
            );
        }
    }
}
