//! Conditional requests (RFC 9110 §13): `If-None-Match` turns a GET whose representation the
//! client already holds into a 304 without a body, and `If-Match` lets a change go ahead only
//! while the client's tag is still current.
//!
//! A malformed `If-None-Match` is ignored: the GET is then answered in full, which costs the
//! client bytes and nothing else. A malformed `If-Match` is 400 `invalid_parameter`: going
//! ahead without it could overwrite a change the client meant to guard against, and answering
//! 412 would tell it that its (unreadable) tag is stale.

use actix_web::body::{self, BoxBody, MessageBody as _};
use actix_web::http::header::{self, HeaderMap, HeaderName};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};

use super::compression::{self, StandsForCompressible};
use super::etag::EntityTag;
use crate::error::ApiError;

/// What an `If-Match` or `If-None-Match` field asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Precondition {
    /// `*`: any current representation.
    Any,
    /// One of these tags, in the order sent (never empty).
    Tags(Vec<EntityTag>),
}

/// Why a field is not `*` or a list of entity tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MalformedPrecondition(&'static str);

impl Precondition {
    /// The field `name` of `headers` (all its lines, as one list): `None` without the field.
    /// RFC 9110's list syntax: tags separated by commas and optional spaces, empty elements
    /// skipped; `*` alone.
    pub(crate) fn parse(
        headers: &HeaderMap,
        name: &HeaderName,
    ) -> Result<Option<Self>, MalformedPrecondition> {
        let mut lines = headers.get_all(name).peekable();
        if lines.peek().is_none() {
            return Ok(None);
        }
        let mut any = false;
        let mut tags = Vec::new();
        for line in lines {
            for element in elements(line.as_bytes())? {
                if element == b"*" {
                    any = true;
                } else {
                    tags.push(
                        EntityTag::parse(element)
                            .map_err(|_| MalformedPrecondition("an entity tag is malformed"))?,
                    );
                }
            }
        }
        match (any, tags.is_empty()) {
            (true, true) => Ok(Some(Self::Any)),
            (true, false) => Err(MalformedPrecondition("`*` must stand alone")),
            (false, true) => Err(MalformedPrecondition("no entity tag is given")),
            (false, false) => Ok(Some(Self::Tags(tags))),
        }
    }

    /// Whether `If-None-Match` with this value names the representation tagged `current`: `*`,
    /// or a tag weakly equal to it ([`EntityTag::weak_eq`]).
    pub(crate) fn names(&self, current: &EntityTag) -> bool {
        match self {
            Self::Any => true,
            Self::Tags(tags) => tags.iter().any(|tag| tag.weak_eq(current)),
        }
    }

    /// The opaque parts of the strong tags, gzip suffix removed: what `If-Match`'s strong
    /// comparison (RFC 9110 §8.8.3.2) can match, for a resource that compares versions rather
    /// than whole tags. A weak tag matches nothing.
    pub(crate) fn strong_opaques(&self) -> impl Iterator<Item = &str> {
        let tags = match self {
            Self::Any => &[][..],
            Self::Tags(tags) => &tags[..],
        };
        tags.iter()
            .filter(|tag| !tag.is_weak())
            .map(EntityTag::opaque)
    }
}

/// The elements of one list line, each trimmed, empty ones skipped. A comma inside quotes is
/// part of a tag (`etagc` allows it), so the line is walked rather than split.
fn elements(line: &[u8]) -> Result<Vec<&[u8]>, MalformedPrecondition> {
    let mut elements = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (at, byte) in line.iter().enumerate() {
        match byte {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                elements.push(&line[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(MalformedPrecondition("a quote is not closed"));
    }
    elements.push(&line[start..]);
    Ok(elements
        .into_iter()
        .map(|element| element.trim_ascii())
        .filter(|element| !element.is_empty())
        .collect())
}

/// The request's `If-Match`: `None` without one, 400 `invalid_parameter` when it is malformed.
pub(crate) fn if_match(req: &HttpRequest) -> Result<Option<Precondition>, ApiError> {
    Precondition::parse(req.headers(), &header::IF_MATCH).map_err(|MalformedPrecondition(why)| {
        ApiError::invalid_parameter(format!(
            "`If-Match` must be `*` or a list of entity tags like `\"17.3\"`: {why}"
        ))
    })
}

/// The request's `If-None-Match`, or `None` without one or when it is malformed.
pub(crate) fn if_none_match(req: &HttpRequest) -> Option<Precondition> {
    Precondition::parse(req.headers(), &header::IF_NONE_MATCH)
        .ok()
        .flatten()
}

/// The answer to a GET: `ok` (a 200 with its body and headers) tagged with `etag`, or, when the
/// request's `If-None-Match` names `etag`, a 304 with the same headers and no body (RFC 9110
/// §15.4.5: `ETag`, `Vary`, `Cache-Control` and the rest as the 200 would have them). The
/// compression middleware gives the 304 the `Vary: Accept-Encoding` and gzipped tag the 200
/// would have had ([`StandsForCompressible`]).
pub(crate) fn not_modified_or(
    req: &HttpRequest,
    etag: &EntityTag,
    ok: HttpResponse,
) -> HttpResponse {
    let mut ok = ok;
    ok.headers_mut().insert(header::ETAG, etag.header_value());
    if !if_none_match(req).is_some_and(|condition| condition.names(etag)) {
        return ok;
    }
    let compressible = compression::worth_compressing(ok.body().size(), ok.headers());
    let (mut not_modified, _body) = ok.into_parts();
    *not_modified.status_mut() = StatusCode::NOT_MODIFIED;
    let headers = not_modified.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    headers.remove(header::CONTENT_LENGTH);
    let mut not_modified = not_modified.set_body(BoxBody::new(body::None::new()));
    if compressible {
        not_modified.extensions_mut().insert(StandsForCompressible);
    }
    not_modified
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use actix_web::body::BodySize;
    use actix_web::http::header::HeaderValue;
    use actix_web::test::TestRequest;

    use super::*;

    fn parsed(
        name: HeaderName,
        lines: &[&str],
    ) -> Result<Option<Precondition>, MalformedPrecondition> {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(name.clone(), HeaderValue::from_str(line).unwrap());
        }
        Precondition::parse(&headers, &name)
    }

    fn tags(texts: &[&str]) -> Precondition {
        Precondition::Tags(
            texts
                .iter()
                .map(|text| EntityTag::parse(text.as_bytes()).unwrap())
                .collect(),
        )
    }

    #[test]
    fn a_list_of_tags_or_a_star_parses_across_lines_and_empty_elements() {
        assert_eq!(parsed(header::IF_MATCH, &[]), Ok(None));
        assert_eq!(
            parsed(header::IF_MATCH, &["*"]),
            Ok(Some(Precondition::Any))
        );
        assert_eq!(
            parsed(header::IF_MATCH, &[r#""a", W/"b",,"c,d""#, r#" "e" "#]),
            Ok(Some(tags(&[r#""a""#, r#"W/"b""#, r#""c,d""#, r#""e""#])))
        );
    }

    #[test]
    fn a_malformed_list_is_refused() {
        for lines in [
            &[""][..],
            &[" , "],
            &["abc"],
            &[r#""a", b"#],
            &[r#""a"#],
            &["*", r#""a""#],
            &[r#"*, "a""#],
        ] {
            assert!(parsed(header::IF_MATCH, lines).is_err(), "{lines:?}");
        }
    }

    #[test]
    fn if_none_match_names_a_weakly_equal_tag_or_a_star() {
        let current = EntityTag::strong("abc");
        assert!(Precondition::Any.names(&current));
        assert!(tags(&[r#"W/"abc""#]).names(&current));
        assert!(tags(&[r#""x""#, r#""abc-gz""#]).names(&current));
        assert!(!tags(&[r#""abd""#]).names(&current));
    }

    #[test]
    fn the_strong_opaques_leave_out_weak_tags_and_the_gzip_suffix() {
        let sent = tags(&[r#""7.3-gz""#, r#"W/"7.4""#, r#""8.1""#]);
        assert_eq!(sent.strong_opaques().collect::<Vec<_>>(), ["7.3", "8.1"]);
        assert_eq!(Precondition::Any.strong_opaques().count(), 0);
    }

    #[test]
    fn a_malformed_if_match_is_a_400_and_a_malformed_if_none_match_is_ignored() {
        let req = TestRequest::default()
            .insert_header((header::IF_MATCH, "17.3"))
            .insert_header((header::IF_NONE_MATCH, "17.3"))
            .to_http_request();
        let refused = if_match(&req).unwrap_err();
        assert_eq!(refused.code(), crate::error::ErrorCode::InvalidParameter);
        assert!(
            refused.message().contains("If-Match"),
            "{}",
            refused.message()
        );
        assert_eq!(if_none_match(&req), None);
    }

    fn page(etag: &EntityTag, if_none_match: Option<&str>, body: &str) -> HttpResponse {
        let mut req = TestRequest::default();
        if let Some(value) = if_none_match {
            req = req.insert_header((header::IF_NONE_MATCH, value));
        }
        let ok = HttpResponse::Ok()
            .content_type("application/json")
            .insert_header((header::LINK, "</v1/pets?cursor=x>; rel=\"next\""))
            .body(body.to_owned());
        not_modified_or(&req.to_http_request(), etag, ok)
    }

    #[test]
    fn a_named_tag_answers_304_with_the_200s_headers_and_no_body() {
        let etag = EntityTag::strong("abc");
        let large = "[".to_owned() + &"{\"id\":1},".repeat(200) + "{}]";
        let answer = page(&etag, Some(r#""zzz", "abc-gz""#), &large);
        assert_eq!(answer.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(answer.body().size(), BodySize::None);
        assert_eq!(answer.headers().get(header::ETAG).unwrap(), r#""abc""#);
        assert!(answer.headers().contains_key(header::LINK));
        assert!(!answer.headers().contains_key(header::CONTENT_TYPE));
        assert!(answer.extensions().contains::<StandsForCompressible>());

        let small = page(&etag, Some("*"), "[]");
        assert_eq!(small.status(), StatusCode::NOT_MODIFIED);
        assert!(!small.extensions().contains::<StandsForCompressible>());
    }

    #[test]
    fn without_a_named_tag_the_200_goes_out_tagged() {
        let etag = EntityTag::strong("abc");
        for if_none_match in [None, Some(r#""abd""#), Some("abc")] {
            let answer = page(&etag, if_none_match, "[]");
            assert_eq!(answer.status(), StatusCode::OK, "{if_none_match:?}");
            assert_eq!(answer.headers().get(header::ETAG).unwrap(), r#""abc""#);
            assert_eq!(answer.body().size(), BodySize::Sized(2));
        }
    }
}
