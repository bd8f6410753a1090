//! What every query string goes through: name/value pairs parsed once, a parameter given twice
//! refused, none at all where an operation takes none, and the listings' `Link: <...>;
//! rel="next"` to the following page. Each bad value
//! is a 400 `invalid_parameter` naming its parameter.

use actix_web::web::Query;
use petstore_domain::PageLimit;

use crate::error::ApiError;

/// The name of every listing's page size parameter.
pub(crate) const LIMIT: &str = "limit";

/// The query string's `name=value` pairs, in order, percent-decoded.
pub(crate) fn pairs(query_string: &str) -> Result<Vec<(String, String)>, ApiError> {
    Query::<Vec<(String, String)>>::from_query(query_string)
        .map(Query::into_inner)
        .map_err(|_| ApiError::invalid_parameter("the query string is not valid"))
}

/// The rule for an operation that takes no query parameter (every one but the listings): a
/// parameter it would ignore is refused, as the listings refuse one they do not know, so a
/// typo (`?fields=name`) is never silently dropped.
pub(crate) fn none_taken(query_string: &str, operation: &str) -> Result<(), ApiError> {
    if query_string.is_empty() {
        return Ok(());
    }
    match pairs(query_string)?.into_iter().next() {
        None => Ok(()),
        Some((name, _)) => Err(ApiError::invalid_parameter(format!(
            "unknown query parameter `{name}`; {operation} takes none"
        ))),
    }
}

/// Keeps `value` of parameter `name` in `slot`, refusing a second one: `?limit=5&limit=50` is
/// ambiguous, so it is refused rather than silently keeping one of them.
pub(crate) fn set_once(
    slot: &mut Option<String>,
    name: &str,
    value: String,
) -> Result<(), ApiError> {
    match slot.replace(value) {
        None => Ok(()),
        Some(_) => Err(ApiError::invalid_parameter(format!(
            "query parameter `{name}` must be given at most once"
        ))),
    }
}

/// The `limit` parameter of any listing: the domain's page size, its default when not given.
pub(crate) fn page_limit(raw: Option<&str>) -> Result<PageLimit, ApiError> {
    raw.map_or(Ok(PageLimit::DEFAULT), |raw| {
        PageLimit::parse_text(raw).map_err(|error| {
            ApiError::invalid_parameter(format!("query parameter `{LIMIT}` {error}"))
        })
    })
}

/// `<path?name=value&...>; rel="next"`. The values are digits, status names and base64url
/// cursors, none of which needs escaping.
pub(crate) fn next_link<'a>(
    path: &str,
    params: impl IntoIterator<Item = (&'a str, String)>,
) -> String {
    // Written into one string: listPets answers with a next link on every full page.
    let mut link = format!("<{path}?");
    for (at, (name, value)) in params.into_iter().enumerate() {
        if at > 0 {
            link.push('&');
        }
        link.push_str(name);
        link.push('=');
        push_encoded(&mut link, &value);
    }
    link.push_str(">; rel=\"next\"");
    link
}

/// Appends `value` to a query string: RFC 3986's unreserved characters as they are, every other
/// byte percent-encoded (a tag's space, a name's `&` or `é`), so the link is one valid URI.
fn push_encoded(out: &mut String, value: &str) {
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_next_link_s_values_are_percent_encoded() {
        let link = next_link(
            "/v1/pets",
            [
                ("tag", "small dog".to_owned()),
                ("name", "Zoë & co".to_owned()),
            ],
        );
        assert_eq!(
            link,
            "</v1/pets?tag=small%20dog&name=Zo%C3%AB%20%26%20co>; rel=\"next\""
        );
    }

    #[test]
    fn a_parameter_given_twice_is_refused_naming_it() {
        let mut slot = None;
        set_once(&mut slot, "limit", "5".to_owned()).unwrap();
        let err = set_once(&mut slot, "limit", "50".to_owned()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter);
        assert!(err.message().contains("`limit`"), "{}", err.message());
    }

    #[test]
    fn next_links_keep_the_parameters_in_order() {
        assert_eq!(
            next_link(
                "/v1/pets",
                [("limit", "5".to_owned()), ("cursor", "abc".to_owned())]
            ),
            "</v1/pets?limit=5&cursor=abc>; rel=\"next\""
        );
        assert_eq!(
            pairs("a=1&b=%20x&a=2").unwrap(),
            [("a", "1"), ("b", " x"), ("a", "2")]
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
        );
    }
}

#[cfg(test)]
mod none_taken_tests {
    use super::none_taken;

    #[test]
    fn an_operation_without_parameters_refuses_any() {
        assert!(none_taken("", "getOrder").is_ok());
        let error = none_taken("fields=name", "getOrder").unwrap_err();
        assert_eq!(
            error.message(),
            "unknown query parameter `fields`; getOrder takes none"
        );
    }
}
