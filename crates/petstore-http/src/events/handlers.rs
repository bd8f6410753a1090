//! The feed's handler and its part of the OpenAPI document (`#[utoipa::path]`): every status
//! listed is one this handler (or `Authorized` and the storage error mapping it uses) can
//! answer.

use actix_web::http::header;
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::EventError;

use super::dto::EventDto;
use super::params::{next_page_link, parse_list};
use super::Payloads;
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::state::{Authorized, Read};

/// A position older than the retention is 410 `gone`: the reader must read the resources
/// again and start the feed over.
impl From<EventError> for ApiError {
    fn from(err: EventError) -> Self {
        match err {
            EventError::Gone => Self::new(
                ErrorCode::Gone,
                "events after this cursor are no longer kept: read the pets (and orders) again \
                 with their listings, then read the feed from its start (without a `cursor`)",
            ),
            EventError::Repository(err) => err.into(),
        }
    }
}

/// One page of the feed, oldest first; `Link: rel="next"` always, where the next read starts.
#[utoipa::path(
    get,
    path = "/events",
    operation_id = "listEvents",
    tag = "events",
    summary = "List events",
    description = "What changed, one event per change, in the order the changes were \
        committed, as a bare array. Every page has `Link: <...>; rel=\"next\"` (RFC 8288): \
        where the next read starts, also on a page that reached the end of the feed (read it \
        again later for what happened since); `X-More-Events: true` tells that more events \
        follow already. A key reads every pet and category event, and the order events of the \
        orders it may see (its own; a `store` key every order's). Without `cursor` the feed \
        starts at its oldest event kept; events are kept for a retention (30 days unless the \
        service is set otherwise), and a cursor from before the oldest kept event is 410 \
        `gone`. The cursor is signed and bound to the API key and the `types` that read it. \
        New event types may be added within v1: name the types you handle in `types` to \
        receive no other.",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("types" = Option<String>, Query, min_length = 1,
            pattern = r"^(pet\.(\*|created|updated|removed)|order\.(\*|placed|approved|delivered|cancelled)|category\.(\*|created|updated|removed))(,(pet\.(\*|created|updated|removed)|order\.(\*|placed|approved|delivered|cancelled)|category\.(\*|created|updated|removed)))*$",
            description = "Only these types, comma-separated: `pet.created`, `pet.updated`, \
                `pet.removed`, `order.placed`, `order.approved`, `order.delivered`, \
                `order.cancelled`, `category.created`, `category.updated`, \
                `category.removed`; `pet.*`, `order.*` or `category.*` for every type of a \
                resource. Default: every type."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`; it is \
                signed and valid for this API key and these `types` only."),
    ),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "A page of events (possibly empty), oldest first.",
            body = Vec<EventDto>,
            headers(
                ("Link" = String, description = "Always: `</v1/events?limit=20&cursor=...>; \
                    rel=\"next\"`, where the next read starts."),
                ("X-More-Events" = bool, description = "`true` when more events follow this \
                    page now, `false` at the end of the feed."),
            )),
        (status = 400, description = "`invalid_parameter`: `limit`, `types` or `cursor` is \
            invalid or given twice, the cursor belongs to another key or other `types`, or \
            the query has another parameter.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 410, description = "`gone`: events after this cursor are no longer kept; \
            read the resources again and start the feed over without a cursor.",
            body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_events(
    caller: Authorized<Read>,
    req: HttpRequest,
    payloads: Data<Payloads>,
) -> Result<HttpResponse, ApiError> {
    let key = caller.caller().key().clone();
    let query = parse_list(req.query_string(), &key, caller.cursors())?;
    let page = caller
        .events()
        .list_events(caller.caller(), query.after, query.types, query.limit)
        .await?;
    let link = next_page_link(&query, page.next, &key, caller.cursors());
    let events: Vec<EventDto> = page
        .events
        .into_iter()
        .map(|entry| EventDto::of(entry, &payloads))
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header((header::LINK, link))
        .insert_header(("X-More-Events", if page.more { "true" } else { "false" }))
        .json(events))
}
