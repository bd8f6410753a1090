//! What the document says about the API as a whole (its `info`), written for the people who
//! read it: they see the document, not this repository, so it says itself what a client must
//! know before the first call. `GET /` and `GET /v1` answer with the same name and version.

/// The API's name.
pub const API_TITLE: &str = "petstore";

/// The interface version (spec, section 9), not the crate's.
pub const API_VERSION: &str = "1.0.0";

/// `info.description`: what every operation has in common.
pub(super) const DESCRIPTION: &str = "The animals of a pet store and the orders for them: list \
pets, add one, get one (deprecated); place, list, approve, deliver and cancel orders \
(experimental).\n\n\
**Keys.** Every operation needs an API key, sent as `Authorization: Bearer <key>`. The store's \
operator issues keys with a scope, each allowing what the ones before it do: `read` lists and \
gets pets and the key's own orders, `write` also creates pets and places and cancels its own \
orders, `store` (the store's staff) also sees, approves, delivers and cancels every order. \
Keys expire and can be revoked. A missing, invalid, expired or revoked key is 401 \
`unauthorized` with `WWW-Authenticate`; a key whose scope falls short is 403 `forbidden`.\n\n\
**Errors.** Every error, whatever produced it, is an `Error` JSON body: `code` (machine \
readable, an open set: handle a code you do not know by the HTTP status), `message` (for \
people; it names the offending field, parameter or header) and `status` (the HTTP status, \
repeated). Unknown body fields and query parameters are refused, never ignored.\n\n\
**Paging.** A listing answers a JSON array of at most `limit` items (1 to 100, default 20). \
When there may be more, `Link: <...>; rel=\"next\"` is the URL of the next page, with an opaque \
`cursor`: follow it as given; a cursor altered or used with other filters is 400 \
`invalid_parameter`.\n\n\
**Deprecation.** A deprecated operation is marked `deprecated` here, and every response it \
gives carries `Deprecation`, `Sunset` and `Link: <...>; rel=\"successor-version\"`; from its \
sunset on it answers 410 `gone`.\n\n\
**Retries.** Every POST takes an optional `Idempotency-Key` (1 to 255 visible ASCII \
characters; send a new UUID per request you mean once). A retry with the same key and the same \
request gets the first response again, with `Idempotent-Replayed: true`, and nothing is done \
twice; the same key with another request is 422 `idempotency_key_reused`.\n\n\
**Limits.** When rate limits are on, responses to a key carry `RateLimit` and \
`RateLimit-Policy`, and a key over its limit gets 429 `rate_limited` with `Retry-After`. Every \
response carries `X-Request-Id`: quote it when reporting a problem.";
