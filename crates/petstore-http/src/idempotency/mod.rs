//! `Idempotency-Key` on every write: the HTTP side of idempotent retries, one helper for every
//! operation that takes a key ([`write`]). It reads the key and claims it (409 while a request
//! with it is in flight here), runs the operation's write with the claim's record plan, and
//! answers: with the response recorded with the write, from the record stored first for the
//! key (a replay, or 422 for a key reused with another request), or with a refusal, which is
//! recorded for the retry when it depends on the request alone (400). The rules themselves
//! live in the application layer (`petstore_application::Idempotency`).

use std::future::Future;

use actix_web::body::MessageBody;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError};
use petstore_application::{
    Admission, Answer, Claim, Fingerprint, Idempotency, RecordPlan, Render, StoredResponse, Written,
};
use petstore_domain::{IdempotencyKey, IdempotencyKeyError, KeyId};
use sha2::{Digest, Sha256};

pub(crate) mod openapi;
#[cfg(test)]
pub(crate) mod tests;

use crate::error::{ApiError, ErrorCode};
use crate::security::auth::KeyClaims;
use crate::state::HttpState;
use crate::wire::json_out::{json_bytes, JsonBody};

pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub(crate) const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Decides what becomes of a write with `body`: without `Idempotency-Key` (or without retries
/// configured), it is carried out as usual; with one, under a claim on its key, unless a
/// request with the key is in flight here (409). Whether it was answered before is found out
/// by its write, so a first request costs no lookup.
fn admit(state: &HttpState, req: &HttpRequest, body: &[u8]) -> Result<Option<Claim>, ApiError> {
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
fn sent(stored: StoredResponse) -> HttpResponse {
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
    body: &(impl JsonBody + ?Sized),
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
        body: json_bytes(body).unwrap_or_default(),
    }
}

/// The response [`sent`] makes of [`json_response`] with the same arguments, built straight into
/// the HTTP response: for a write without a key, whose answer is not recorded.
pub(crate) fn json_sent<const N: usize>(
    status: StatusCode,
    extra: [(HeaderName, String); N],
    body: &(impl JsonBody + ?Sized),
) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    response.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    ));
    for (name, value) in extra {
        if let Ok(value) = HeaderValue::try_from(value) {
            response.insert_header((name, value));
        }
    }
    response.body(json_bytes(body).unwrap_or_default())
}

/// An error response as it is sent, to store for the retry.
fn stored_error(error: &ApiError) -> StoredResponse {
    stored(error.error_response())
}

/// `response` as a record keeps it: status, the headers whose values are text, and the bytes
/// of a body held whole.
pub(crate) fn stored(response: HttpResponse) -> StoredResponse {
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

/// How an operation's result is answered.
pub(crate) struct Rendering<T> {
    /// The response recorded for the key, and sent unless `first` is set.
    recorded: Render<T>,
    /// The first answer, when it carries a secret that is never recorded: a replay gets
    /// `recorded`, without it.
    first: Option<Render<T>>,
    /// `recorded`'s response built straight into the HTTP response, for a write without a key:
    /// nothing is recorded then, and the detour through a [`StoredResponse`] would only cost
    /// its copies and conversions.
    unrecorded: Option<fn(T) -> HttpResponse>,
}

// Two function pointers, copied whatever `T` is (a derive would ask `T: Copy`).
impl<T> Clone for Rendering<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Rendering<T> {}

impl<T> Rendering<T> {
    /// One response, sent and recorded alike.
    pub(crate) const fn same(render: Render<T>) -> Self {
        Self {
            recorded: render,
            first: None,
            unrecorded: None,
        }
    }

    /// This rendering, with `direct` answering a write without a key: the response [`sent`]
    /// makes of what `recorded` renders (status, headers, bytes alike), made without the
    /// [`StoredResponse`] ([`json_sent`] for [`json_response`]).
    pub(crate) const fn sent_directly(self, direct: fn(T) -> HttpResponse) -> Self {
        Self {
            unrecorded: Some(direct),
            ..self
        }
    }

    /// A first answer with a secret (`first`), and the response recorded for replays
    /// (`recorded`), which leaves it out.
    pub(crate) const fn secret_once(first: Render<T>, recorded: Render<T>) -> Self {
        Self {
            recorded,
            first: Some(first),
            unrecorded: None,
        }
    }
}

/// Carries out a write that takes an `Idempotency-Key`, the one way every such operation does:
/// `write` is given the record plan when the request has a key (and retries are on), and its
/// outcome is answered by [`answer_written`]. A refusal (`Err`) that depends on the request
/// alone (400) is recorded for the retry; any other (404, 409: what is stored may change
/// before the retry; 5xx: ours) is not, so the retry is carried out again.
pub(crate) async fn write<T, W, F>(
    state: &HttpState,
    req: &HttpRequest,
    body: &[u8],
    rendering: Rendering<T>,
    write: W,
) -> Result<HttpResponse, ApiError>
where
    W: FnOnce(Option<RecordPlan<T>>) -> F,
    F: Future<Output = Result<Written<T>, ApiError>>,
{
    let claim = admit(state, req, body)?;
    let outcome = write(claim.as_ref().map(|claim| claim.plan(rendering.recorded))).await;
    match (outcome, claim) {
        (Ok(written), claim) => answer_written(rendering, claim.as_ref(), written),
        (Err(error), Some(claim)) if depends_on_request_alone(&error) => {
            record_refusal(state, claim, error).await
        }
        (Err(error), _) => Err(error),
    }
}

/// Carries out an action that takes an `Idempotency-Key` but whose storage keeps no record in
/// its transaction (it adds work that is delivered at least once anyway: a ping, a retried
/// delivery): a key answered before is answered from its record; otherwise the action runs and
/// its response is recorded after it. A crash between the two lets a retry act again, which
/// such an action tolerates.
pub(crate) async fn act<T, A, F>(
    state: &HttpState,
    req: &HttpRequest,
    body: &[u8],
    render: Render<T>,
    action: A,
) -> Result<HttpResponse, ApiError>
where
    A: FnOnce() -> F,
    F: Future<Output = Result<T, ApiError>>,
{
    let claim = admit(state, req, body)?;
    let (Some(claim), Some(idempotency)) = (claim, state.idempotency()) else {
        return Ok(sent(render(&action().await?)));
    };
    if let Some(earlier) = idempotency.earlier(&claim).await? {
        return answer(earlier);
    }
    let response = match action().await {
        Ok(result) => render(&result),
        Err(error) if depends_on_request_alone(&error) => {
            return record_refusal(state, claim, error).await
        }
        Err(error) => return Err(error),
    };
    match idempotency.record_refusal(claim, response.clone()).await {
        Ok(Some(earlier)) => answer(earlier),
        Ok(None) => Ok(sent(response)),
        Err(storage) => {
            tracing::warn!(error = %storage, "an action's idempotency record was not stored");
            Ok(sent(response))
        }
    }
}

/// The response to a write's outcome: the response recorded with it (or the first answer with
/// its secret), or, when a record for the key was stored first, the answer from that record.
fn answer_written<T>(
    rendering: Rendering<T>,
    claim: Option<&Claim>,
    written: Written<T>,
) -> Result<HttpResponse, ApiError> {
    match written {
        Written::Done(result, recorded) => Ok(match (rendering.first, recorded) {
            (Some(first), _) => sent(first(&result)),
            (None, Some(recorded)) => sent(recorded),
            (None, None) => match rendering.unrecorded {
                Some(direct) => direct(result),
                None => sent((rendering.recorded)(&result)),
            },
        }),
        Written::Earlier(record) => match claim {
            Some(claim) => answer(Idempotency::answer(&record, claim.fingerprint())),
            None => Err(ApiError::internal(
                "a write without a key was answered from a record",
                &std::io::Error::other("storage returned a record for an unplanned write"),
            )),
        },
    }
}

/// Whether a refusal would be the same for the same request whatever is stored meanwhile.
fn depends_on_request_alone(error: &ApiError) -> bool {
    error.status() == StatusCode::BAD_REQUEST
}

/// Records `error`, the refusal of the request claimed by `claim`, for its retry; or answers
/// from a record stored first for the key.
async fn record_refusal(
    state: &HttpState,
    claim: Claim,
    error: ApiError,
) -> Result<HttpResponse, ApiError> {
    let Some(idempotency) = state.idempotency() else {
        return Err(error);
    };
    match idempotency
        .record_refusal(claim, stored_error(&error))
        .await
    {
        Ok(None) => Err(error),
        Ok(Some(earlier)) => answer(earlier),
        // Not stored: its retry is checked again, which is no worse.
        Err(storage) => {
            tracing::warn!(error = %storage, "a refusal's idempotency record was not stored");
            Err(error)
        }
    }
}
