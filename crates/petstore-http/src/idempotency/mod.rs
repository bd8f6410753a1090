//! `Idempotency-Key` on every POST: the HTTP side of idempotent retries. A handler reads the
//! body, asks [`admit`] for a claim on the key (409 while a request with it is in flight here),
//! carries the request out with the claim's record plan, and lets [`finish`] answer: with the
//! response stored with the write, from the record stored first for the key (a replay, or 422
//! for a key reused with another request), or with a refusal that it stores for the retry. The rules themselves live in the application layer (`petstore_application::Idempotency`).

use actix_web::body::MessageBody;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError};
use petstore_application::{Admission, Answer, Claim, Fingerprint, Recorded, StoredResponse};
use petstore_domain::{IdempotencyKey, IdempotencyKeyError, KeyId};
use sha2::{Digest, Sha256};

pub(crate) mod openapi;

use crate::error::{ApiError, ErrorCode};
use crate::security::auth::KeyClaims;
use crate::state::HttpState;

pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub(crate) const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Decides what becomes of a POST with `body`: without `Idempotency-Key` (or without retries
/// configured), it is carried out as usual; with one, under a claim on its key, unless a
/// request with the key is in flight here (409). Whether it was answered before is found out
/// by its write ([`finish`]), so a first request costs no lookup.
pub(crate) fn admit(
    state: &HttpState,
    req: &HttpRequest,
    body: &[u8],
) -> Result<Option<Claim>, ApiError> {
    let Some(idempotency) = state.idempotency() else {
        return Ok(None);
    };
    let mut values = req.headers().get_all(IDEMPOTENCY_KEY);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::invalid_parameter(
            "the `Idempotency-Key` header is given more than once",
        ));
    }
    let key = value
        .to_str()
        .map_or(
            Err(IdempotencyKeyError::NotVisibleAscii),
            IdempotencyKey::parse,
        )
        .map_err(|error| {
            ApiError::invalid_parameter(format!("the `Idempotency-Key` header {error}"))
        })?;
    let owner = req
        .extensions()
        .get::<KeyClaims>()
        .and_then(|claims| KeyId::parse(&claims.jti).ok())
        .ok_or_else(|| {
            ApiError::internal(
                "idempotency without an API key",
                &std::io::Error::other("no valid key id on an authorized request"),
            )
        })?;
    match idempotency.admit(owner, key, fingerprint(req, body)) {
        Admission::Proceed(claim) => Ok(Some(claim)),
        Admission::InFlight => Err(ApiError::new(
            ErrorCode::Conflict,
            "a request with this `Idempotency-Key` is still being processed; retry once it \
             has been answered",
        )
        .with_header(header::RETRY_AFTER, "1")),
    }
}

/// What identifies a request for its key: method, path with query, and body.
fn fingerprint(req: &HttpRequest, body: &[u8]) -> Fingerprint {
    let mut digest = Sha256::new();
    digest.update(req.method().as_str().as_bytes());
    digest.update(b" ");
    digest.update(
        req.uri()
            .path_and_query()
            .map_or(req.path(), |path| path.as_str())
            .as_bytes(),
    );
    digest.update(b"\n");
    digest.update(body);
    Fingerprint(digest.finalize().into())
}

/// The response to a request answered from the record stored first for its key.
fn answer(answer: Answer) -> Result<HttpResponse, ApiError> {
    match answer {
        Answer::Replay(stored) => Ok(replay(stored)),
        Answer::Reused => Err(ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "this `Idempotency-Key` was used for another request (another method, path or \
             body); use a new key for a new request",
        )),
    }
}

/// A stored response, sent again: the same status, headers and bytes, marked as a replay.
fn replay(stored: StoredResponse) -> HttpResponse {
    let mut response = sent(stored);
    response
        .headers_mut()
        .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    response
}

/// The response a stored one stands for.
pub(crate) fn sent(stored: StoredResponse) -> HttpResponse {
    let mut response = HttpResponse::build(
        StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    );
    for (name, value) in &stored.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.insert_header((name, value));
        }
    }
    response.body(stored.body)
}

/// A JSON response to store: status, `Content-Type`, the `extra` headers and the body's bytes.
pub(crate) fn json_response(
    status: StatusCode,
    extra: &[(HeaderName, String)],
    body: &impl serde::Serialize,
) -> StoredResponse {
    let mut headers = vec![(
        header::CONTENT_TYPE.as_str().to_owned(),
        "application/json".to_owned(),
    )];
    headers.extend(
        extra
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), value.clone())),
    );
    StoredResponse {
        status: status.as_u16(),
        headers,
        // Serializing a DTO cannot fail: every field is a string, number or null.
        body: serde_json::to_vec(body).unwrap_or_default(),
    }
}

/// An error response as it is sent, to store for the retry.
fn stored_error(error: &ApiError) -> StoredResponse {
    let response = error.error_response();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .try_into_bytes()
        .map(|bytes| bytes.to_vec())
        .unwrap_or_default();
    StoredResponse {
        status,
        headers,
        body,
    }
}

/// Answers a request carried out under `claim`: with the response stored with its write (the
/// one its plan rendered), from the record another request stored first, or with its refusal,
/// which is stored for the retry when it is the client's (4xx): a retry of a failure of ours
/// (5xx) is carried out again.
pub(crate) async fn finish<T>(
    state: &HttpState,
    claim: Claim,
    outcome: Result<Recorded<T>, ApiError>,
) -> Result<HttpResponse, ApiError> {
    match outcome {
        Ok(Recorded::Done(_, response)) => Ok(sent(response)),
        Ok(Recorded::Earlier(record)) => answer(petstore_application::Idempotency::answer(
            &record,
            claim.fingerprint(),
        )),
        Err(error) if error.status().is_client_error() => {
            let Some(idempotency) = state.idempotency() else {
                return Err(error);
            };
            match idempotency.record(claim, stored_error(&error)).await {
                Ok(None) => Err(error),
                Ok(Some(earlier)) => answer(earlier),
                // Not stored: its retry is checked again, which is no worse.
                Err(storage) => {
                    tracing::warn!(error = %storage, "a refusal's idempotency record was not stored");
                    Err(error)
                }
            }
        }
        Err(error) => Err(error),
    }
}
