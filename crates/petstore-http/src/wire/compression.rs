//! Response compression: a body of at least [`MIN_COMPRESSED_BYTES`] of a type that compresses
//! (JSON, text, scripts) goes out gzip-encoded to a client whose `Accept-Encoding` accepts gzip
//! (RFC 9110 §12.5.3), and says `Vary: Accept-Encoding` whether it was encoded or not, so a
//! cache keeps the two apart. Smaller bodies (one pet, an `Error`) go out as they are: below a
//! kilobyte the bytes saved are less than a packet and the work is not.
//!
//! gzip only, at zlib's fastest level: every HTTP client and Prometheus decode it, and the
//! fastest level keeps nearly all of the gain; brotli and zstd compress no better at their fast
//! levels and would each add a large crate.
//!
//! A gzipped response's `ETag` gains the `-gz` suffix ([`EntityTag::gzipped`]): the tag names the
//! uncompressed bytes, and the gzipped ones are another representation. A 304 is never encoded;
//! one that stands for a 200 this compressor would have encoded ([`StandsForCompressible`])
//! gets what that 200 would have carried: `Vary: Accept-Encoding` and, for a client that
//! accepts gzip, the suffixed tag.
//!
//! A handler that serves the same bytes every time (Swagger UI's files) encodes them once, at
//! zlib's best level, with [`gzip_once`], chooses the encoding itself and marks its response
//! with [`EncodingChosen`], which this compressor then leaves alone.

use std::cell::RefCell;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::HttpResponse;
use flate2::{Compress, Compression, FlushCompress, Status};

use super::etag::EntityTag;
use super::json_out::{json_len, JsonBody};

/// Smallest body sent compressed, in bytes.
pub(crate) const MIN_COMPRESSED_BYTES: usize = 1024;

/// Bodies this large are compressed on the blocking pool: milliseconds of compression on the
/// worker would hold up every other connection it serves.
const ON_THE_BLOCKING_POOL: usize = 64 * 1024;

/// In a response's extensions: its handler chose its `Content-Encoding` (and says
/// `Vary: Accept-Encoding` itself), so [`compress`] sends it as it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EncodingChosen;

impl EncodingChosen {
    /// Marks `response` as encoded by its handler.
    pub(crate) fn mark(response: &mut HttpResponse) {
        response.extensions_mut().insert(Self);
    }
}

/// In a 304's extensions: the 200 it stands for has a body [`compress`] would have encoded
/// ([`worth_compressing`]), so the 304 gets that 200's `Vary` and, for a client that accepts
/// gzip, its suffixed `ETag`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StandsForCompressible;

/// Compresses the response of `req` when its client asks for gzip and the body is worth it: a
/// middleware of its own for the metrics' address. The API's app calls [`compress`] from the
/// middleware it already has, since every middleware layer costs a boxed future per request.
pub(crate) async fn compress_when_asked(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let accepts_gzip = accepts_gzip(req.headers());
    let response = next.call(req).await?.map_into_boxed_body();
    Ok(compress(response, accepts_gzip).await)
}

/// `response` gzip-encoded if `accepts_gzip` (its request's [`accepts_gzip`]) and its body is
/// worth it, with `Vary: Accept-Encoding` on every body that could have been.
pub(crate) async fn compress(
    response: ServiceResponse<BoxBody>,
    accepts_gzip: bool,
) -> ServiceResponse<BoxBody> {
    if response.status() == StatusCode::NOT_MODIFIED {
        return not_modified(response, accepts_gzip);
    }
    // Most answers (one pet, an error, a health check) stop here, without taking the response
    // apart.
    if !worth_compressing(response.response().body().size(), response.headers())
        || response.headers().contains_key(header::CONTENT_ENCODING)
        || response
            .response()
            .extensions()
            .contains::<EncodingChosen>()
    {
        return response;
    }
    let (request, response) = response.into_parts();
    let (mut response, body) = response.into_parts();
    let body = match body.try_into_bytes() {
        Ok(bytes) => {
            let headers = response.headers_mut();
            headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
            let compressed = if !accepts_gzip {
                None
            } else if bytes.len() >= ON_THE_BLOCKING_POOL {
                let body = bytes.clone();
                actix_web::web::block(move || gzip(&body))
                    .await
                    .ok()
                    .flatten()
            } else {
                gzip(&bytes)
            };
            match compressed {
                Some(compressed) => {
                    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                    gzip_etag(headers);
                    BoxBody::new(compressed)
                }
                None => BoxBody::new(bytes),
            }
        }
        // A streamed body (none of the API's) goes out as it is.
        Err(body) => body,
    };
    ServiceResponse::new(request, response.set_body(body))
}

/// Whether a body of `size` with `headers` is one [`compress`] encodes for a client that asks:
/// at least [`MIN_COMPRESSED_BYTES`] of a type that compresses.
pub(crate) fn worth_compressing(size: BodySize, headers: &HeaderMap) -> bool {
    matches!(size, BodySize::Sized(size) if size >= MIN_COMPRESSED_BYTES as u64)
        && has_compressible_type(headers)
}

/// Whether `value` as JSON is a body [`compress`] encodes for a client that asks
/// ([`worth_compressing`] of it as `application/json`). For a 304, which stands for a 200 whose
/// body is never sent.
pub(crate) fn json_worth_compressing(value: &(impl JsonBody + ?Sized)) -> bool {
    // A value that is not JSON would have been a 500: nothing to encode.
    json_len(value).is_ok_and(|len| len >= MIN_COMPRESSED_BYTES)
}

/// A 304 as it goes out: never encoded (it has no body), with the `Vary` and `ETag` of the 200
/// it stands for when that 200 would have been encoded.
fn not_modified(
    mut response: ServiceResponse<BoxBody>,
    accepts_gzip: bool,
) -> ServiceResponse<BoxBody> {
    let stands_for_compressible = response
        .response()
        .extensions()
        .contains::<StandsForCompressible>();
    if stands_for_compressible {
        let headers = response.headers_mut();
        headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
        if accepts_gzip {
            gzip_etag(headers);
        }
    }
    response
}

/// Gives the `ETag` in `headers`, if any, the gzipped response's suffix. A tag that does not
/// parse (none of the service's) is left as it is.
fn gzip_etag(headers: &mut HeaderMap) {
    let gzipped = headers
        .get(header::ETAG)
        .and_then(|value| EntityTag::parse(value.as_bytes()).ok())
        .map(|etag| etag.gzipped().header_value());
    if let Some(gzipped) = gzipped {
        headers.insert(header::ETAG, gzipped);
    }
}

/// Whether `Accept-Encoding` accepts gzip: named (or as `x-gzip`) with a weight above 0, or
/// not named and `*` accepted. No header, or an empty one, accepts only the body as it is.
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut gzip = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let accepted = parts.all(|param| weight_above_zero(param.trim()));
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                gzip = Some(accepted);
            } else if coding == "*" {
                any = Some(accepted);
            }
        }
    }
    gzip.or(any).unwrap_or(false)
}

/// False only for a weight of zero (`q=0`, `q=0.000`) or one that is not a weight; other
/// parameters do not matter.
fn weight_above_zero(param: &str) -> bool {
    match param.split_once('=') {
        Some((name, weight)) if name.trim().eq_ignore_ascii_case("q") => weight
            .trim()
            .parse::<f32>()
            .is_ok_and(|weight| weight > 0.0),
        _ => true,
    }
}

fn has_compressible_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(is_compressible)
}

/// Whether a body of `content_type` is one gzip shrinks: JSON, text and scripts.
pub(crate) fn is_compressible(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    let starts_with = |prefix: &str| {
        essence
            .get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    let ends_with = |suffix: &str| {
        essence
            .len()
            .checked_sub(suffix.len())
            .and_then(|at| essence.get(at..))
            .is_some_and(|end| end.eq_ignore_ascii_case(suffix))
    };
    starts_with("text/")
        || essence.eq_ignore_ascii_case("application/json")
        || ends_with("+json")
        || essence.eq_ignore_ascii_case("application/javascript")
}

thread_local! {
    /// Each worker thread's compressor, reset for every body: a new one allocates and zeroes
    /// zlib's whole state, which costs more than compressing a page.
    static GZIP: RefCell<Option<Compress>> = const { RefCell::new(None) };
}

/// zlib's largest window: bodies are whole JSON documents of a few KiB to a few hundred.
const WINDOW_BITS: u8 = 15;

/// `bytes` gzip-encoded, or `None` when that would not make it smaller.
fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    GZIP.with_borrow_mut(|compressor| {
        let compressor =
            compressor.get_or_insert_with(|| Compress::new_gzip(Compression::fast(), WINDOW_BITS));
        compressor.reset();
        encode(compressor, bytes)
    })
}

/// `bytes` gzip-encoded at zlib's best level, or `None` when that would not make them smaller:
/// for bytes encoded once and sent many times, where each byte saved counts more than the time.
pub(crate) fn gzip_once(bytes: &[u8]) -> Option<Vec<u8>> {
    encode(
        &mut Compress::new_gzip(Compression::best(), WINDOW_BITS),
        bytes,
    )
}

/// `bytes` through `compressor` (fresh or reset), or `None` when that would not make them smaller.
fn encode(compressor: &mut Compress, bytes: &[u8]) -> Option<Vec<u8>> {
    // Room for one byte less than the body: an encoding that fills it is not worth sending.
    let mut encoded = Vec::with_capacity(bytes.len().saturating_sub(1));
    loop {
        let consumed = usize::try_from(compressor.total_in()).ok()?;
        let status = compressor
            .compress_vec(&bytes[consumed..], &mut encoded, FlushCompress::Finish)
            .ok()?;
        match status {
            Status::StreamEnd => return Some(encoded),
            _ if encoded.len() < encoded.capacity() => {}
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(values: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
        }
        accepts_gzip(&headers)
    }

    #[test]
    fn gzip_is_accepted_when_named_with_a_weight_above_zero() {
        assert!(accepts(&["gzip"]));
        assert!(accepts(&["gzip, deflate, br"]));
        assert!(accepts(&["br;q=1.0, GZIP;q=0.5"]));
        assert!(accepts(&["x-gzip"]));
        assert!(accepts(&["deflate", "gzip;q=0.1"]));
    }

    #[test]
    fn gzip_is_refused_at_weight_zero_even_when_everything_else_is_accepted() {
        assert!(!accepts(&["gzip;q=0"]));
        assert!(!accepts(&["gzip; q=0.000, *"]));
        assert!(!accepts(&["*;q=1, gzip;q=0"]));
        assert!(!accepts(&["gzip;q=nonsense"]));
    }

    #[test]
    fn a_wildcard_accepts_gzip_unless_it_has_weight_zero() {
        assert!(accepts(&["*"]));
        assert!(accepts(&["br, *;q=0.2"]));
        assert!(!accepts(&["*;q=0"]));
    }

    #[test]
    fn no_header_or_other_codings_only_get_the_body_as_it_is() {
        assert!(!accepts(&[]));
        assert!(!accepts(&[""]));
        assert!(!accepts(&["identity"]));
        assert!(!accepts(&["br, zstd, deflate"]));
    }

    #[test]
    fn json_text_and_scripts_compress_images_and_unknown_types_do_not() {
        let compressible = |content_type: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_str(content_type).unwrap(),
            );
            has_compressible_type(&headers)
        };
        assert!(compressible("application/json"));
        assert!(compressible("Application/JSON; charset=utf-8"));
        assert!(compressible("text/plain; version=0.0.4"));
        assert!(compressible("text/html"));
        assert!(compressible("application/javascript"));
        assert!(compressible("application/problem+json"));
        assert!(!compressible("image/png"));
        assert!(!compressible("application/octet-stream"));
        assert!(!has_compressible_type(&HeaderMap::new()));
    }

    #[test]
    fn gzip_round_trips_and_declines_what_it_cannot_shrink() {
        let page = br#"{"id":1,"name":"Rex","status":"available"},"#.repeat(100);
        let compressed = gzip(&page).expect("a repetitive page shrinks");
        assert!(compressed.len() < page.len() / 4, "{}", compressed.len());
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&compressed[..]),
            &mut decoded,
        )
        .unwrap();
        assert_eq!(decoded, page);

        // xorshift64: bytes with nothing for gzip to find.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let noise: Vec<u8> = (0..2048)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[0]
            })
            .collect();
        assert_eq!(gzip(&noise), None);
        assert_eq!(gzip_once(&noise), None);
    }

    #[test]
    fn gzip_once_round_trips_at_least_as_small_as_the_fast_level() {
        let page = br#"{"id":1,"name":"Rex","status":"available"},"#.repeat(100);
        let best = gzip_once(&page).expect("a repetitive page shrinks");
        assert!(best.len() <= gzip(&page).unwrap().len());
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&best[..]), &mut decoded)
            .unwrap();
        assert_eq!(decoded, page);
    }

    #[test]
    fn a_json_body_is_worth_compressing_from_the_threshold_on_counted_or_sent() {
        let json = HeaderMap::from_iter([(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )]);
        for length in MIN_COMPRESSED_BYTES - 4..MIN_COMPRESSED_BYTES + 2 {
            let text = "x".repeat(length);
            let sent = serde_json::to_vec(&text).unwrap();
            assert_eq!(
                json_worth_compressing(&text),
                worth_compressing(BodySize::Sized(sent.len() as u64), &json),
                "{} bytes",
                sent.len()
            );
        }
        assert!(!json_worth_compressing(&serde_json::json!([])));
        assert!(json_worth_compressing(&vec!["y".repeat(100); 20]));
    }

    fn large_json_response() -> HttpResponse {
        HttpResponse::Ok()
            .content_type("application/json")
            .body(br#"{"id":1,"name":"Rex"},"#.repeat(100))
    }

    #[actix_web::test]
    async fn a_large_json_body_is_compressed_for_a_client_that_asks() {
        let response = actix_web::test::TestRequest::default()
            .to_srv_response(large_json_response().map_into_boxed_body());
        let response = compress(response, true).await;
        assert_eq!(
            response.headers().get(header::CONTENT_ENCODING).unwrap(),
            "gzip"
        );
    }

    fn tagged(response: HttpResponse) -> ServiceResponse<BoxBody> {
        let mut response = response;
        response
            .headers_mut()
            .insert(header::ETAG, HeaderValue::from_static("\"abc\""));
        actix_web::test::TestRequest::default().to_srv_response(response.map_into_boxed_body())
    }

    fn etag_of(response: &ServiceResponse<BoxBody>) -> &str {
        response
            .headers()
            .get(header::ETAG)
            .unwrap()
            .to_str()
            .unwrap()
    }

    #[actix_web::test]
    async fn a_gzipped_response_names_its_tag_with_the_suffix_and_a_plain_one_without() {
        let gzipped = compress(tagged(large_json_response()), true).await;
        assert_eq!(etag_of(&gzipped), "\"abc-gz\"");

        let plain = compress(tagged(large_json_response()), false).await;
        assert_eq!(plain.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(etag_of(&plain), "\"abc\"");

        let small = HttpResponse::Ok()
            .content_type("application/json")
            .body("{}");
        assert_eq!(etag_of(&compress(tagged(small), true).await), "\"abc\"");
    }

    #[actix_web::test]
    async fn a_304_is_never_encoded_and_says_what_its_200_would_have() {
        let not_modified = || {
            let mut response = HttpResponse::NotModified().finish();
            response.extensions_mut().insert(StandsForCompressible);
            tagged(response)
        };
        let for_gzip = compress(not_modified(), true).await;
        assert_eq!(for_gzip.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(for_gzip.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(for_gzip.response().body().size(), BodySize::Sized(0));
        assert_eq!(etag_of(&for_gzip), "\"abc-gz\"");
        assert_eq!(
            for_gzip.headers().get(header::VARY).unwrap(),
            "accept-encoding"
        );

        let plain = compress(not_modified(), false).await;
        assert_eq!(etag_of(&plain), "\"abc\"");
        assert_eq!(
            plain.headers().get(header::VARY).unwrap(),
            "accept-encoding"
        );

        let small = compress(tagged(HttpResponse::NotModified().finish()), true).await;
        assert_eq!(etag_of(&small), "\"abc\"");
        assert_eq!(small.headers().get(header::VARY), None);
    }

    #[actix_web::test]
    async fn a_response_whose_handler_chose_its_encoding_is_left_as_it_is() {
        let mut chosen = large_json_response();
        chosen
            .headers_mut()
            .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        EncodingChosen::mark(&mut chosen);
        let length = chosen.body().size();
        let response =
            actix_web::test::TestRequest::default().to_srv_response(chosen.map_into_boxed_body());

        let response = compress(response, true).await;

        assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(response.headers().get_all(header::VARY).count(), 1);
        assert_eq!(response.response().body().size(), length);
    }
}
