//! Conditional requests (RFC 9110 §13): `If-None-Match` turns a GET whose representation the
//! client already holds into a 304 without a body, and `If-Match` lets a change go ahead only
//! while the client's tag is still current.
//!
//! A malformed `If-None-Match` is ignored: the GET is then answered in full, which costs the
//! client bytes and nothing else. A malformed `If-Match` is 400 `invalid_parameter`: going
//! ahead without it could overwrite a change the client meant to guard against, and answering
//! 412 would tell it that its (unreadable) tag is stale.

use actix_web::body;
use actix_web::http::header::{self, ContentType, HeaderMap, HeaderName};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};

use super::compression::{self, StandsForCompressible};
use super::etag::EntityTag;
use super::json_out::{json_bytes, JsonBody};
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
            for element in Elements::of(line.as_bytes()) {
                let element = element?;
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

/// The elements of one list line, each trimmed, empty ones skipped; an error for a quote left
/// open. A comma inside quotes is part of a tag (`etagc` allows it), so the line is walked
/// rather than split.
struct Elements<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> Elements<'a> {
    fn of(line: &'a [u8]) -> Self {
        Self { rest: Some(line) }
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<&'a [u8], MalformedPrecondition>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let rest = self.rest?;
            let mut quoted = false;
            let comma = rest.iter().position(|&byte| {
                if byte == b'"' {
                    quoted = !quoted;
                }
                byte == b',' && !quoted
            });
            let element = match comma {
                Some(at) => {
                    self.rest = Some(&rest[at + 1..]);
                    &rest[..at]
                }
                None if quoted => {
                    self.rest = None;
                    return Some(Err(MalformedPrecondition("a quote is not closed")));
                }
                None => {
                    self.rest = None;
                    rest
                }
            };
            let element = element.trim_ascii();
            if !element.is_empty() {
                return Some(Ok(element));
            }
        }
    }
}

/// The request's `If-Match`: `None` without one, 400 `invalid_parameter` when it is malformed.
pub(crate) fn if_match(req: &HttpRequest) -> Result<Option<Precondition>, ApiError> {
    Precondition::parse(req.headers(), &header::IF_MATCH).map_err(|MalformedPrecondition(why)| {
        ApiError::invalid_parameter(format!(
            "`If-Match` must be `*` or a list of entity tags like `\"17.3\"`: {why}"
        ))
    })
}

/// Whether the request's `If-None-Match` names the representation tagged `current`: `*`, or a
/// tag weakly equal to it ([`EntityTag::weakly_named_by`]). False without the field and for a
/// malformed one, which is ignored. Read in place: deciding costs no allocation.
pub(crate) fn none_match_names(req: &HttpRequest, current: &EntityTag) -> bool {
    let mut lines = req.headers().get_all(header::IF_NONE_MATCH);
    let Some(first) = lines.next() else {
        return false;
    };
    // What a client with a cache sends: the one tag it holds, the response's `ETag` as it was.
    let first = first.as_bytes();
    if lines.next().is_none() && current.weakly_named_by(first) == Ok(true) {
        return true;
    }
    let (mut any, mut tags, mut named) = (false, false, false);
    for line in req.headers().get_all(header::IF_NONE_MATCH) {
        for element in Elements::of(line.as_bytes()) {
            let Ok(element) = element else {
                return false;
            };
            if element == b"*" {
                any = true;
                continue;
            }
            match current.weakly_named_by(element) {
                Ok(equal) => {
                    tags = true;
                    named |= equal;
                }
                Err(_) => return false,
            }
        }
    }
    // `*` stands alone, and a field without elements is malformed.
    if any {
        !tags
    } else {
        named
    }
}

/// The answer to a GET of `body`, a JSON representation tagged `etag`, sent with `head` (its
/// status, 200, and the other headers the 200 carries, such as `Link`): the 200 with `body`,
/// or, when the request's `If-None-Match` names `etag`, a 304 with the same headers and no body
/// (RFC 9110 §15.4.5). The condition is decided before anything is serialized. A 304 standing
/// for a 200 the compression middleware would have encoded is marked
/// [`StandsForCompressible`], so that it gets that 200's `Vary` and gzipped tag.
pub(crate) fn json_or_not_modified(
    req: &HttpRequest,
    etag: &EntityTag,
    mut head: HttpResponseBuilder,
    body: &(impl JsonBody + ?Sized),
) -> Result<HttpResponse, ApiError> {
    head.insert_header((header::ETAG, etag.header_value()));
    if !none_match_names(req, etag) {
        let bytes = json_bytes(body)
            .map_err(|err| ApiError::internal("serializing a response body", &err))?;
        return Ok(head.content_type(ContentType::json()).body(bytes));
    }
    head.status(StatusCode::NOT_MODIFIED);
    if compression::json_worth_compressing(body) {
        head.extensions_mut().insert(StandsForCompressible);
    }
    Ok(head.body(body::None::new()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use actix_web::body::{BodySize, MessageBody as _};
    use actix_web::http::header::HeaderValue;
    use actix_web::test::TestRequest;

    use super::*;
    use crate::wire::compression::MIN_COMPRESSED_BYTES;

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

    fn request(if_none_match: &[&str]) -> HttpRequest {
        let mut req = TestRequest::default();
        for line in if_none_match {
            req = req.append_header((header::IF_NONE_MATCH, *line));
        }
        req.to_http_request()
    }

    #[test]
    fn if_none_match_names_a_weakly_equal_tag_or_a_star() {
        let current = EntityTag::strong("abc");
        for lines in [
            &[r#""abc""#][..],
            &["*"],
            &[r#"W/"abc""#],
            &[r#""abc-gz""#],
            &[r#""x", "abc-gz""#],
            &[r#""x""#, r#" W/"abc" "#],
            &[r#""a,b", ,"abc""#],
        ] {
            assert!(none_match_names(&request(lines), &current), "{lines:?}");
        }
        for lines in [&[][..], &[r#""abd""#], &[r#""ab""#, r#""abcd""#], &["abc"]] {
            assert!(!none_match_names(&request(lines), &current), "{lines:?}");
        }
    }

    #[test]
    fn a_malformed_if_none_match_names_nothing_even_with_the_current_tag_in_it() {
        let current = EntityTag::strong("abc");
        for lines in [
            &[r#""abc", abd"#][..],
            &[r#""abc""#, "abd"],
            &[r#"*, "abc""#],
            &["*", r#""abc""#],
            &[r#""abc", "ab"#],
            &[" , "],
        ] {
            assert!(!none_match_names(&request(lines), &current), "{lines:?}");
        }
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
        assert!(!none_match_names(&req, &EntityTag::strong("17.3")));
    }

    /// A JSON array of `pets` objects: 2 bytes for none, 1,027 for 114.
    fn body(pets: usize) -> serde_json::Value {
        serde_json::Value::Array(vec![serde_json::json!({"id": 1}); pets])
    }

    fn page(
        etag: &EntityTag,
        if_none_match: Option<&str>,
        body: &serde_json::Value,
    ) -> HttpResponse {
        let lines: &[&str] = match &if_none_match {
            Some(value) => &[value],
            None => &[],
        };
        let mut head = HttpResponse::Ok();
        head.insert_header((header::LINK, "</v1/pets?cursor=x>; rel=\"next\""));
        json_or_not_modified(&request(lines), etag, head, body).unwrap()
    }

    #[test]
    fn a_named_tag_answers_304_with_the_200s_headers_and_no_body() {
        let etag = EntityTag::strong("abc");
        let large = body(114);
        assert!(serde_json::to_vec(&large).unwrap().len() >= MIN_COMPRESSED_BYTES);
        let answer = page(&etag, Some(r#""zzz", "abc-gz""#), &large);
        assert_eq!(answer.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(answer.body().size(), BodySize::None);
        assert_eq!(answer.headers().get(header::ETAG).unwrap(), r#""abc""#);
        assert!(answer.headers().contains_key(header::LINK));
        assert!(!answer.headers().contains_key(header::CONTENT_TYPE));
        assert!(answer.extensions().contains::<StandsForCompressible>());

        let small = page(&etag, Some("*"), &body(0));
        assert_eq!(small.status(), StatusCode::NOT_MODIFIED);
        assert!(!small.extensions().contains::<StandsForCompressible>());
    }

    #[test]
    fn without_a_named_tag_the_200_goes_out_tagged_with_its_body() {
        let etag = EntityTag::strong("abc");
        for if_none_match in [None, Some(r#""abd""#), Some("abc")] {
            let answer = page(&etag, if_none_match, &body(0));
            assert_eq!(answer.status(), StatusCode::OK, "{if_none_match:?}");
            assert_eq!(answer.headers().get(header::ETAG).unwrap(), r#""abc""#);
            assert_eq!(
                answer.headers().get(header::CONTENT_TYPE).unwrap(),
                "application/json"
            );
            assert!(answer.headers().contains_key(header::LINK));
            assert_eq!(answer.body().size(), BodySize::Sized(2));
        }
    }
}
