//! Query and path parameters: `limit`, `status` and `cursor` of `listPets`, `petId` of `getPet`.
//!
//! Parsed by hand from the raw strings so that every bad value is a 400 `invalid_parameter`
//! naming the parameter, and so that the rules are exactly ours: integers are plain decimal
//! digits (no `+`, no `1.5`, no `1e2`), statuses are spelled exactly.

use actix_web::web::Query;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use petstore_domain::{PetId, PetLimit, PetListQuery, PetStatus};

use crate::error::ApiError;

/// Parses a decimal integer written as `-?[0-9]+` that fits in an `i64`.
pub(crate) fn parse_int64(raw: &str) -> Option<i64> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok()
}

/// The `petId` path segment.
pub(crate) fn parse_pet_id(raw: &str) -> Result<PetId, ApiError> {
    parse_int64(raw).map(PetId::new).ok_or_else(|| {
        ApiError::invalid_parameter(format!(
            "path parameter `petId` must be an int64 integer (got `{raw}`)"
        ))
    })
}

/// The `listPets` query string. Parameters other than `limit`, `status` and `cursor` are
/// ignored (clients and proxies add their own, e.g. cache busters); each known one may appear
/// at most once.
pub(crate) fn parse_list_query(query_string: &str) -> Result<PetListQuery, ApiError> {
    let pairs = Query::<Vec<(String, String)>>::from_query(query_string)
        .map_err(|_| ApiError::invalid_parameter("the query string is not valid"))?
        .into_inner();

    let mut limit = None;
    let mut status = None;
    let mut cursor = None;
    for (name, value) in pairs {
        let slot = match name.as_str() {
            "limit" => &mut limit,
            "status" => &mut status,
            "cursor" => &mut cursor,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(ApiError::invalid_parameter(format!(
                "query parameter `{name}` must be given at most once"
            )));
        }
    }

    let limit = match limit {
        None => PetLimit::DEFAULT,
        Some(raw) => parse_int64(&raw)
            .and_then(|value| PetLimit::parse(value).ok())
            .ok_or_else(|| {
                ApiError::invalid_parameter(format!(
                    "query parameter `limit` must be an integer from {} to {}",
                    PetLimit::MIN,
                    PetLimit::MAX
                ))
            })?,
    };
    let status = status
        .map(|raw| {
            PetStatus::parse(&raw).map_err(|err| {
                ApiError::invalid_parameter(format!("query parameter `status` {err}"))
            })
        })
        .transpose()?;
    let after = cursor.map(|raw| decode_cursor(&raw)).transpose()?;

    Ok(PetListQuery {
        limit,
        status,
        after,
    })
}

/// Version tag inside cursors, so their format can change without old ones being misread.
const CURSOR_PREFIX: &str = "v1:";

/// The opaque `cursor` of the next page: base64url (no padding) of `v1:<last id>`. Opaque to
/// clients so that the paging scheme can change; not tamper-proof (it needs no secret: a forged
/// cursor only lets a client start a page where it could anyway).
pub(crate) fn encode_cursor(after: PetId) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{after}"))
}

pub(crate) fn decode_cursor(raw: &str) -> Result<PetId, ApiError> {
    URL_SAFE_NO_PAD
        .decode(raw)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix(CURSOR_PREFIX).and_then(parse_int64))
        .map(PetId::new)
        .ok_or_else(|| {
            ApiError::invalid_parameter(
                "query parameter `cursor` is not a cursor this service issued; \
                 use the `Link: rel=\"next\"` header of the previous page",
            )
        })
}

/// The `Link` target of the page after `query`'s, keeping its limit and status.
pub(crate) fn next_page_link(query: &PetListQuery, next_after: PetId) -> String {
    let mut target = format!("/v1/pets?limit={}", query.limit.get());
    if let Some(status) = query.status {
        target.push_str("&status=");
        target.push_str(status.as_str());
    }
    target.push_str("&cursor=");
    target.push_str(&encode_cursor(next_after));
    format!("<{target}>; rel=\"next\"")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    #[track_caller]
    fn invalid(query: &str, mentions: &str) {
        let err = parse_list_query(query).expect_err(query);
        assert_eq!(err.code(), ErrorCode::InvalidParameter, "{query}");
        assert!(
            err.message().contains(mentions),
            "{query}: {}",
            err.message()
        );
    }

    #[test]
    fn defaults_to_20_of_any_status_from_the_start() {
        assert_eq!(parse_list_query("").unwrap(), PetListQuery::default());
    }

    #[test]
    fn reads_limit_status_and_cursor() {
        let cursor = encode_cursor(PetId::new(41));
        let query = parse_list_query(&format!("limit=5&status=sold&cursor={cursor}")).unwrap();
        assert_eq!(query.limit.get(), 5);
        assert_eq!(query.status, Some(PetStatus::Sold));
        assert_eq!(query.after, Some(PetId::new(41)));
    }

    #[test]
    fn accepts_the_limit_bounds() {
        assert_eq!(parse_list_query("limit=1").unwrap().limit.get(), 1);
        assert_eq!(parse_list_query("limit=100").unwrap().limit.get(), 100);
    }

    #[test]
    fn rejects_bad_limits_naming_the_parameter() {
        for raw in [
            "0",
            "101",
            "-1",
            "abc",
            "1.5",
            "",
            "+5",
            "1e1",
            " 5",
            "99999999999999999999",
        ] {
            invalid(
                &format!("limit={raw}"),
                "query parameter `limit` must be an integer from 1 to 100",
            );
        }
    }

    #[test]
    fn rejects_bad_statuses_naming_the_parameter() {
        for raw in ["SOLD", "", "adopted", "available,sold"] {
            invalid(&format!("status={raw}"), "query parameter `status`");
        }
    }

    #[test]
    fn rejects_repeated_parameters() {
        invalid("limit=1&limit=2", "`limit` must be given at most once");
    }

    #[test]
    fn ignores_unknown_parameters() {
        let query = parse_list_query("foo=bar&_=123&limit=3").unwrap();
        assert_eq!(query.limit.get(), 3);
    }

    #[test]
    fn percent_encoded_values_are_decoded() {
        assert_eq!(
            parse_list_query("status=%73old").unwrap().status,
            Some(PetStatus::Sold)
        );
    }

    #[test]
    fn rejects_malformed_cursors() {
        let not_v1 = URL_SAFE_NO_PAD.encode("v2:5");
        let not_a_number = URL_SAFE_NO_PAD.encode("v1:five");
        for raw in [
            "",
            "!!!",
            "djE6",
            not_v1.as_str(),
            not_a_number.as_str(),
            "5",
        ] {
            invalid(&format!("cursor={raw}"), "query parameter `cursor`");
        }
    }

    #[test]
    fn cursor_round_trips_any_id() {
        for id in [1, 42, i64::MAX, -3] {
            assert_eq!(
                decode_cursor(&encode_cursor(PetId::new(id))).unwrap().get(),
                id
            );
        }
    }

    #[test]
    fn pet_id_must_be_an_int64() {
        assert_eq!(parse_pet_id("7").unwrap().get(), 7);
        assert_eq!(parse_pet_id("-7").unwrap().get(), -7);
        for raw in ["abc", "1.5", "", "+1", "9223372036854775808", "1e3", "0x10"] {
            let err = parse_pet_id(raw).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidParameter);
            assert!(err.message().contains("`petId`"));
        }
    }

    #[test]
    fn next_link_keeps_limit_and_status() {
        let query = parse_list_query("limit=2&status=pending").unwrap();
        let link = next_page_link(&query, PetId::new(9));
        let cursor = encode_cursor(PetId::new(9));
        assert_eq!(
            link,
            format!("</v1/pets?limit=2&status=pending&cursor={cursor}>; rel=\"next\"")
        );
        let without_status = next_page_link(&PetListQuery::default(), PetId::new(9));
        assert_eq!(
            without_status,
            format!("</v1/pets?limit=20&cursor={cursor}>; rel=\"next\"")
        );
    }
}
