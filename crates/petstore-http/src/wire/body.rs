//! Reading a JSON request body: the `Content-Type` check (415), the size limit (413) and the
//! deadline (408).
//!
//! Done by hand instead of with `web::Json` so that the order of checks is ours (the handler
//! authenticates first, then calls this) and so that each failure maps to our codes.

use std::time::Duration;

use actix_web::http::header;
use actix_web::mime;
use actix_web::web::{Bytes, Payload};
use actix_web::{HttpMessage, HttpRequest};

use crate::error::{ApiError, ErrorCode};

/// Checks that the request declares `application/json` (one `charset=utf-8` parameter is fine;
/// JSON is UTF-8 by definition, so any other charset, or a second one, is refused rather than
/// misread).
pub(crate) fn require_json_content_type(req: &HttpRequest) -> Result<(), ApiError> {
    require_json_media(req, false)
}

/// [`require_json_content_type`] for a JSON Merge Patch (RFC 7396): `application/merge-patch+json`,
/// or `application/json`, which clients without the patch type send.
pub(crate) fn require_merge_patch_content_type(req: &HttpRequest) -> Result<(), ApiError> {
    require_json_media(req, true)
}

fn require_json_media(req: &HttpRequest, merge_patch: bool) -> Result<(), ApiError> {
    let expected = if merge_patch {
        "send `Content-Type: application/merge-patch+json` (or `application/json`)"
    } else {
        "send `Content-Type: application/json`"
    };
    let mime = match req.mime_type() {
        Ok(Some(mime)) => mime,
        Ok(None) => {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                format!("missing `Content-Type`: {expected}"),
            ))
        }
        Err(_) => {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                format!("unreadable `Content-Type`: {expected}"),
            ))
        }
    };
    let is_json = mime.type_() == mime::APPLICATION
        && ((mime.subtype() == mime::JSON && mime.suffix().is_none())
            || (merge_patch
                && mime.subtype().as_str() == "merge-patch"
                && mime.suffix() == Some(mime::JSON)));
    if !is_json {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("unsupported `Content-Type` `{mime}`: {expected}"),
        ));
    }
    let mut charsets = mime.params().filter(|(name, _)| *name == mime::CHARSET);
    if let Some((_, charset)) = charsets.next() {
        if !charset.as_str().eq_ignore_ascii_case("utf-8") {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                format!("unsupported charset `{charset}`: JSON must be UTF-8"),
            ));
        }
    }
    // Another reader of the header may take the last one: which was meant is not known.
    if charsets.next().is_some() {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("`Content-Type` gives `charset` more than once: {expected}"),
        ));
    }
    Ok(())
}

/// The whole body, at most `limit` bytes, within `deadline`. A declared `Content-Length` over the
/// limit is refused before reading anything; a body without one is cut off as soon as it passes
/// the limit. actix-web bounds the time to receive a request's head, not its body: without the
/// deadline, a client that sends part of a body and stops holds its connection (and a socket)
/// forever.
pub(crate) async fn read_limited(
    req: &HttpRequest,
    payload: Payload,
    limit: usize,
    deadline: Duration,
) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("request body must be at most {limit} bytes"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let Ok(read) = actix_web::rt::time::timeout(deadline, payload.to_bytes_limited(limit)).await
    else {
        return Err(ApiError::body_timeout(deadline));
    };
    match read {
        Ok(Ok(bytes)) => Ok(bytes),
        // The client went away or sent a broken chunked encoding: the body is not JSON we
        // could read, and nobody may be listening for the answer anyway.
        Ok(Err(err)) => Err(ApiError::malformed_json(format!(
            "could not read the request body: {err}"
        ))),
        Err(_) => Err(too_large()),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn checked(content_type: &str) -> Result<(), ApiError> {
        require_json_content_type(
            &TestRequest::default()
                .insert_header((header::CONTENT_TYPE, content_type))
                .to_http_request(),
        )
    }

    #[test]
    fn json_with_at_most_one_utf8_charset_is_accepted() {
        for content_type in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON; Charset=UTF-8",
            "application/json; charset=\"utf-8\"",
        ] {
            assert!(checked(content_type).is_ok(), "{content_type}");
        }
    }

    /// Two charsets are ambiguous (which one did the client mean?), and a parser that reads the
    /// last one would decode what this one checked as UTF-8 otherwise.
    #[test]
    fn a_charset_given_twice_or_other_than_utf8_is_refused_naming_it() {
        for (content_type, named) in [
            ("application/json; charset=utf-8; charset=latin1", "charset"),
            ("application/json; charset=latin1; charset=utf-8", "charset"),
            ("application/json; charset=utf-8; CHARSET=utf-8", "charset"),
            ("application/json; charset=latin1", "latin1"),
        ] {
            let error = checked(content_type).unwrap_err();
            assert_eq!(
                error.code(),
                ErrorCode::UnsupportedMediaType,
                "{content_type}"
            );
            assert!(error.message().contains(named), "{}", error.message());
        }
    }
}
