//! The README's walk-through, run with the client progenitor generated from the committed
//! `docs/openapi-3.0.json` (see `build.rs`), against a live server:
//!
//! ```sh
//! PETSTORE_URL=http://127.0.0.1:PORT/v1 PETSTORE_KEY=<write key> petstore-progenitor-walkthrough
//! ```
//!
//! Every call goes through the generated `Client` and its typed results: a success must parse
//! as the documented type, and every error must reach this code as
//! `progenitor_client::Error::ErrorResponse` holding the generated `types::Error` with the
//! expected `code` and `status`. Any mismatch prints what was expected and what came, and exits 1.
//! `tests/clients/run.sh` builds and runs it; one summary line on success.

use std::{num::NonZeroU64, process::ExitCode, time::Instant};

use progenitor_client::{Error as ClientError, ResponseValue};
use reqwest::{header, StatusCode, Url};

#[allow(dead_code, unused_imports, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/petstore_client.rs"));
}

use generated::{types, Client};

type Outcome<T> = Result<T, String>;

/// Pets created for the paging part, besides the walk-through's first pet.
const PAGED_PETS: usize = 45;
const PAGE_LIMIT: u32 = 10;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let (Ok(base), Ok(key)) = (std::env::var("PETSTORE_URL"), std::env::var("PETSTORE_KEY")) else {
        eprintln!(
            "progenitor: set PETSTORE_URL (http://HOST:PORT/v1) and PETSTORE_KEY (a write key)"
        );
        return ExitCode::from(2);
    };
    let start = Instant::now();
    match walkthrough(base.trim_end_matches('/'), &key).await {
        Ok(summary) => {
            println!(
                "progenitor client: walk-through passed in {:.1} s: {summary}",
                start.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("progenitor client: walk-through FAILED: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A generated client whose every request carries `Authorization: Bearer <key>` (progenitor
/// leaves authentication to the `reqwest::Client` it is given); `None` sends no key.
fn client(base: &str, key: Option<&str>) -> Outcome<Client> {
    let mut headers = header::HeaderMap::new();
    if let Some(key) = key {
        let value = header::HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|e| format!("the key is not a header value: {e}"))?;
        headers.insert(header::AUTHORIZATION, value);
    }
    // The server is on loopback: a proxy set for reaching package registries must not be used.
    let http = reqwest::Client::builder()
        .no_proxy()
        .default_headers(headers)
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .map_err(|e| format!("building the HTTP client: {e}"))?;
    Ok(Client::new_with_client(base, http))
}

async fn walkthrough(base: &str, key: &str) -> Outcome<String> {
    let api = client(base, Some(key))?;
    let origin = Url::parse(base).map_err(|e| format!("PETSTORE_URL {base:?}: {e}"))?;

    // createPet: 201, the typed pet and its Location.
    let rex = expect_status(
        "createPet Rex",
        api.create_pet(None, &new_pet("Rex", 3)?).await,
        StatusCode::CREATED,
    )?;
    let location = header_str(&rex, header::LOCATION);
    let rex = rex.into_inner();
    ensure!(
        rex.name.as_str() == "Rex"
            && rex.category_id.get() == 3
            && rex.status == types::PetStatus::Available,
        "createPet Rex answered {rex:?}"
    );
    ensure!(
        location.as_deref() == Some(format!("/v1/pets/{}", rex.id).as_str()),
        "createPet Rex: Location {location:?}, expected /v1/pets/{}",
        rex.id
    );

    // createPet with an Idempotency-Key, sent twice as a client retrying would: the second
    // answer is the first again, marked as replayed, and only one pet is stored.
    let key = types::IdempotencyKey::try_from("\"walk-through-tom-1\"")
        .map_err(|e| format!("the generated IdempotencyKey type refused a valid key: {e}"))?;
    let first = expect_status(
        "createPet Tom with Idempotency-Key",
        api.create_pet(Some(&key), &new_pet("Tom", 2)?).await,
        StatusCode::CREATED,
    )?;
    let retry = expect_status(
        "createPet Tom retried with the same Idempotency-Key",
        api.create_pet(Some(&key), &new_pet("Tom", 2)?).await,
        StatusCode::CREATED,
    )?;
    let replayed = header_str(
        &retry,
        header::HeaderName::from_static("idempotent-replayed"),
    );
    let tom_tag = header_str(&first, header::ETAG);
    let (first, retry) = (first.into_inner(), retry.into_inner());
    ensure!(
        replayed.as_deref() == Some("true") && retry.id == first.id,
        "the retry was not replayed: {retry:?} (Idempotent-Replayed {replayed:?}) after {first:?}"
    );
    let tom_tag = tom_tag.ok_or("createPet Tom answered without an ETag")?;

    // 45 more pets, then listPets by their ids, 10 a page, following `Link: rel="next"`.
    // Names beyond ASCII go through the generated name type's pattern check both ways.
    let mut created = Vec::with_capacity(PAGED_PETS);
    for n in 1..=PAGED_PETS {
        let name = format!("Chien nº {n} 🐕");
        let pet = expect_status(
            &format!("createPet {name}"),
            api.create_pet(None, &new_pet(&name, 1 + n as u64 % 5)?)
                .await,
            StatusCode::CREATED,
        )?
        .into_inner();
        ensure!(
            pet.name.as_str() == name,
            "createPet {name} answered {pet:?}"
        );
        created.push(pet.id);
    }
    let (seen, pages) = page_through(&api, &origin, &created).await?;
    ensure!(
        seen == created,
        "paging listPets?id=<the {PAGED_PETS} pets>&limit={PAGE_LIMIT} by Link saw ids {seen:?}, expected {created:?} (each once, in id order)"
    );
    let expected_pages = PAGED_PETS.div_ceil(PAGE_LIMIT as usize);
    ensure!(
        pages == expected_pages,
        "paging {PAGED_PETS} pets {PAGE_LIMIT} a page took {pages} pages, expected {expected_pages}"
    );
    let walked: Vec<i64> = every_pet(&api, &created)
        .await?
        .iter()
        .map(|pet| pet.id)
        .collect();
    ensure!(
        walked == created,
        "every_pet (docs/generated-clients.md) gave {walked:?}"
    );

    // getPet: deprecated, still 200 with the pet and the deprecation headers.
    #[allow(deprecated)]
    let got = expect_status("getPet", api.get_pet(rex.id, None).await, StatusCode::OK)?;
    ensure!(
        got.headers().contains_key("deprecation") && got.headers().contains_key("sunset"),
        "getPet answered without Deprecation and Sunset headers: {:?}",
        got.headers()
    );
    let got = got.into_inner();
    ensure!(
        got.id == rex.id && got.name.as_str() == "Rex",
        "getPet answered {got:?}"
    );

    let changes = change_and_remove(&api, first.id, &tom_tag).await?;

    // placeOrder, approveOrder, deliverOrder: the pet goes pending, then sold.
    let placed = expect_status(
        "placeOrder",
        api.place_order(
            None,
            &types::NewOrder {
                pet_id: rex.id,
                quantity: None,
            },
        )
        .await,
        StatusCode::CREATED,
    )?;
    let location = header_str(&placed, header::LOCATION);
    let order = placed.into_inner();
    ensure!(
        order.pet_id == rex.id
            && order.status == types::OrderStatus::Placed
            && !order.complete
            && order.ship_date.is_none()
            && order.quantity.get() == 1,
        "placeOrder answered {order:?}"
    );
    ensure!(
        location.as_deref() == Some(format!("/v1/store/orders/{}", order.id).as_str()),
        "placeOrder: Location {location:?}"
    );
    expect_pet_status(&api, rex.id, types::PetStatus::Pending, "after placeOrder").await?;

    let approved = expect_status(
        "approveOrder",
        api.approve_order(order.id, None).await,
        StatusCode::OK,
    )?
    .into_inner();
    ensure!(
        approved.id == order.id
            && approved.status == types::OrderStatus::Approved
            && !approved.complete,
        "approveOrder answered {approved:?}"
    );
    let delivered = expect_status(
        "deliverOrder",
        api.deliver_order(order.id, None).await,
        StatusCode::OK,
    )?
    .into_inner();
    ensure!(
        delivered.id == order.id
            && delivered.status == types::OrderStatus::Delivered
            && delivered.complete
            && delivered.ship_date.is_some(),
        "deliverOrder answered {delivered:?}"
    );
    let fetched =
        expect_status("getOrder", api.get_order(order.id).await, StatusCode::OK)?.into_inner();
    ensure!(
        fetched.status == types::OrderStatus::Delivered && fetched.complete,
        "getOrder after deliverOrder answered {fetched:?}"
    );
    expect_pet_status(&api, rex.id, types::PetStatus::Sold, "after deliverOrder").await?;
    // The README's own listing, by status: on this fresh server only Rex was sold.
    let sold = expect_status(
        "listPets?status=sold&limit=10",
        api.list_pets(
            None,
            None,
            None,
            std::num::NonZeroU32::new(10),
            None,
            Some(types::PetStatus::Sold),
            None,
            None,
        )
        .await,
        StatusCode::OK,
    )?;
    ensure!(
        header_str(&sold, header::LINK).is_none(),
        "listPets?status=sold has a next page"
    );
    let sold: Vec<i64> = sold.into_inner().0.iter().map(|pet| pet.id).collect();
    ensure!(
        sold == [rex.id],
        "listPets?status=sold answered {sold:?}, expected only Rex ({})",
        rex.id
    );

    // Errors, each the generated `types::Error` with its code and status.
    let mut errors = Vec::new();
    // 400: the schema's int64 maximum is lost in the generated type (`NonZeroU64`), so the
    // client sends 2^63 and the service refuses it.
    let too_big = NonZeroU64::new(1 << 63).ok_or("2^63 is not zero")?;
    let body = types::NewPet {
        name: "Too big".try_into().map_err(|e| format!("pet name: {e}"))?,
        category_id: too_big,
        description: None,
        photo_urls: None,
        price: None,
        status: None,
        tags: None,
    };
    let error = expect_error(
        "createPet categoryId 2^63",
        api.create_pet(None, &body).await,
        400,
        "validation_failed",
    )?;
    ensure!(
        error.message.contains("categoryId"),
        "createPet categoryId 2^63: the message does not name categoryId: {:?}",
        error.message
    );
    errors.push(400);
    // 400: more ids than the schema's maxItems (not checked by the generated client).
    let too_many: Vec<i64> = (1..=101).collect();
    expect_error(
        "listPets with 101 ids",
        api.list_pets(None, None, Some(&too_many), None, None, None, None, None)
            .await,
        400,
        "invalid_parameter",
    )?;
    errors.push(400);
    // 401: no key, and a key the server never issued.
    expect_error(
        "listPets without a key",
        client(base, None)?
            .list_pets(None, None, None, None, None, None, None, None)
            .await,
        401,
        "unauthorized",
    )?;
    errors.push(401);
    expect_error(
        "createPet with a bogus key",
        client(base, Some("not-a-key"))?
            .create_pet(None, &new_pet("Nobody", 1)?)
            .await,
        401,
        "unauthorized",
    )?;
    errors.push(401);
    // 404: a pet and an order that do not exist.
    let missing = created.last().copied().unwrap_or(rex.id) + 1_000_000;
    #[allow(deprecated)]
    let result = api.get_pet(missing, None).await;
    expect_error("getPet of a missing pet", result, 404, "not_found")?;
    errors.push(404);
    expect_error(
        "getOrder of a missing order",
        api.get_order(order.id + 1_000_000).await,
        404,
        "not_found",
    )?;
    errors.push(404);
    // 409: a second order for the sold pet, and delivering a delivered order again.
    expect_error(
        "placeOrder for a sold pet",
        api.place_order(
            None,
            &types::NewOrder {
                pet_id: rex.id,
                quantity: None,
            },
        )
        .await,
        409,
        "conflict",
    )?;
    errors.push(409);
    expect_error(
        "deliverOrder of a delivered order",
        api.deliver_order(order.id, None).await,
        409,
        "conflict",
    )?;
    errors.push(409);

    // The feed: every change above, in the order it was made, and none of the refused ones (nor
    // the replayed retry). Placing the order made Rex pending and delivering it made him sold.
    let mut changes_made = vec![("pet.created", rex.id), ("pet.created", first.id)];
    changes_made.extend(created.iter().map(|id| ("pet.created", *id)));
    changes_made.extend([
        ("pet.updated", first.id),
        ("pet.removed", first.id),
        ("pet.updated", rex.id),
        ("order.placed", order.id),
        ("order.approved", order.id),
        ("order.delivered", order.id),
        ("pet.updated", rex.id),
    ]);
    let feed = read_the_feed(&api, &origin, &changes_made, order.id).await?;
    let webhooks = webhook_endpoint(&api).await?;

    Ok(format!(
        "createPet x{}, listPets {PAGED_PETS} pets in {pages} pages by Link, getPet, {changes}, order {} placed/approved/delivered (pet sold), {} typed errors ({}), {feed}, {webhooks}",
        PAGED_PETS + 1,
        order.id,
        errors.len(),
        errors.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
    ))
}

/// Events a page of listEvents holds at most in the walk-through's reads.
const EVENT_PAGE_LIMIT: u32 = 20;

/// One page of listEvents: its events, the cursor of its `Link: rel="next"` (where the next
/// read starts; every page has one) and `X-More-Events` (whether more events follow already).
struct EventPage {
    events: Vec<types::Event>,
    next: types::ListEventsCursor,
    more: bool,
}

/// What an event is about, by the generated type of its resource: its `type` and the id of
/// its `data`.
fn subject(event: &types::Event) -> (String, i64) {
    match event {
        types::Event::PetEvent(event) => (event.type_.to_string(), event.data.id),
        types::Event::OrderEvent(event) => (event.type_.to_string(), event.data.id),
        types::Event::CategoryEvent(event) => (
            event.type_.to_string(),
            i64::try_from(event.data.id.get()).unwrap_or(i64::MAX),
        ),
    }
}

/// The feed after the walk-through's changes (`changes_made`, each a type and the id of the
/// resource changed): read page by page by `Link` until `X-More-Events` is `false`, every event
/// parsed as the generated type its `type` names; the end's cursor gives nothing more until
/// one more change, then that change alone; `types=order.*` the order's events alone, and its
/// cursor sent without those types is a typed 400.
async fn read_the_feed(
    api: &Client,
    origin: &Url,
    changes_made: &[(&str, i64)],
    order_id: i64,
) -> Outcome<String> {
    let limit = std::num::NonZeroU32::new(EVENT_PAGE_LIMIT);
    let mut events = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    let end = loop {
        pages += 1;
        ensure!(
            pages <= changes_made.len(),
            "listEvents: still more events after {pages} pages"
        );
        let page = read_events(
            api,
            origin,
            &format!("listEvents page {pages}"),
            cursor.as_ref(),
            limit,
            None,
        )
        .await?;
        ensure!(
            page.events.len() <= EVENT_PAGE_LIMIT as usize,
            "listEvents page {pages} holds {} events, over limit {EVENT_PAGE_LIMIT}",
            page.events.len()
        );
        events.extend(page.events);
        if !page.more {
            break page.next;
        }
        cursor = Some(page.next);
    };
    let read: Vec<(String, i64)> = events.iter().map(subject).collect();
    let expected: Vec<(String, i64)> = changes_made
        .iter()
        .map(|(kind, id)| ((*kind).to_owned(), *id))
        .collect();
    ensure!(
        read == expected,
        "listEvents by Link read (type, data.id) {read:?}, expected {expected:?}"
    );
    let mut ids: Vec<&str> = events.iter().map(event_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ensure!(
        ids.len() == events.len(),
        "listEvents: {} events with {} ids",
        events.len(),
        ids.len()
    );
    // Each event carries its resource as it was right after the change, typed.
    let removed = events.iter().find_map(|event| match event {
        types::Event::PetEvent(event) if event.type_ == types::PetEventType::PetRemoved => {
            Some(&event.data)
        }
        _ => None,
    });
    ensure!(
        removed.is_some_and(|pet| pet.name.as_str() == "Tommy"),
        "pet.removed carries {removed:?}, expected the pet as it was when removed (Tommy)"
    );
    let delivered = events.iter().find_map(|event| match event {
        types::Event::OrderEvent(event) if event.type_ == types::OrderEventType::OrderDelivered => {
            Some(&event.data)
        }
        _ => None,
    });
    ensure!(
        delivered
            .is_some_and(|order| order.status == types::OrderStatus::Delivered && order.complete),
        "order.delivered carries {delivered:?}"
    );

    // The end's cursor: nothing since, until one more change.
    let nothing = read_events(
        api,
        origin,
        "listEvents from the end",
        Some(&end),
        limit,
        None,
    )
    .await?;
    ensure!(
        nothing.events.is_empty() && !nothing.more,
        "listEvents from the end of the feed answered {} events (X-More-Events {}), expected none",
        nothing.events.len(),
        nothing.more
    );
    let felix = expect_status(
        "createPet Felix",
        api.create_pet(None, &new_pet("Felix", 1)?).await,
        StatusCode::CREATED,
    )?
    .into_inner();
    let since = read_events(
        api,
        origin,
        "listEvents from the end after createPet",
        Some(&end),
        limit,
        None,
    )
    .await?;
    let since: Vec<(String, i64)> = since.events.iter().map(subject).collect();
    ensure!(
        since == [("pet.created".to_owned(), felix.id)],
        "listEvents from the end after createPet Felix ({}) answered {since:?}",
        felix.id
    );

    // types=order.*: the order's events alone; the cursor of that read is for those types only.
    let order_types = types::ListEventsTypes::try_from("order.*")
        .map_err(|e| format!("the generated types type refused order.*: {e}"))?;
    let orders = read_events(
        api,
        origin,
        "listEvents?types=order.*",
        None,
        limit,
        Some(&order_types),
    )
    .await?;
    let read: Vec<(String, i64)> = orders.events.iter().map(subject).collect();
    let expected: Vec<(String, i64)> = ["order.placed", "order.approved", "order.delivered"]
        .iter()
        .map(|kind| ((*kind).to_owned(), order_id))
        .collect();
    ensure!(
        read == expected && !orders.more,
        "listEvents?types=order.* answered {read:?} (X-More-Events {}), expected {expected:?}",
        orders.more
    );
    expect_error(
        "listEvents with the cursor of types=order.* without types",
        api.list_events(Some(&orders.next), None, None).await,
        400,
        "invalid_parameter",
    )?;

    Ok(format!(
        "listEvents {} events in {pages} pages by Link in order, 1 more since the end, {} by types=order.*",
        events.len(),
        orders.events.len()
    ))
}

fn event_id(event: &types::Event) -> &str {
    match event {
        types::Event::PetEvent(event) => event.id.as_str(),
        types::Event::OrderEvent(event) => event.id.as_str(),
        types::Event::CategoryEvent(event) => event.id.as_str(),
    }
}

/// One listEvents read: 200, every page with a `Link: rel="next"` back to the feed, carrying
/// the same `types`, and `X-More-Events`.
async fn read_events(
    api: &Client,
    origin: &Url,
    what: &str,
    cursor: Option<&types::ListEventsCursor>,
    limit: Option<std::num::NonZeroU32>,
    event_types: Option<&types::ListEventsTypes>,
) -> Outcome<EventPage> {
    let response = expect_status(
        what,
        api.list_events(cursor, limit, event_types).await,
        StatusCode::OK,
    )?;
    let link = header_str(&response, header::LINK).ok_or_else(|| format!("{what}: no Link"))?;
    let more = header_str(&response, header::HeaderName::from_static("x-more-events"));
    let more = match more.as_deref() {
        Some("true") => true,
        Some("false") => false,
        other => return Err(format!("{what}: X-More-Events {other:?}")),
    };
    let next =
        next_link(&link).ok_or_else(|| format!("{what}: no rel=\"next\" in Link {link:?}"))?;
    let url = origin
        .join(&next)
        .map_err(|e| format!("{what}: Link target {next:?}: {e}"))?;
    ensure!(url.path() == "/v1/events", "{what}: Link points at {url}");
    let linked_types = url
        .query_pairs()
        .find(|(name, _)| name == "types")
        .map(|(_, value)| value.into_owned());
    ensure!(
        linked_types.as_deref() == event_types.map(|types| types.as_str()),
        "{what}: the next link lost the types: {url}"
    );
    let (_, next_cursor) = url
        .query_pairs()
        .find(|(name, _)| name == "cursor")
        .ok_or_else(|| format!("{what}: the next link has no cursor: {url}"))?;
    let next = next_cursor
        .as_ref()
        .try_into()
        .map_err(|e| format!("{what}: the generated type refuses cursor {next_cursor:?}: {e}"))?;
    Ok(EventPage {
        events: response.into_inner(),
        next,
        more,
    })
}

/// The staff's changes to a pet whose `ETag` (from createPet) is `tag`: updatePet with
/// `If-Match` renames it and answers a new tag; the old tag is then stale, so a second change
/// with it is 412 and changes nothing; deletePet with the new tag is 204, and a second deletePet
/// 404.
async fn change_and_remove(api: &Client, id: i64, tag: &str) -> Outcome<String> {
    // The generated condition types check `If-Match`'s syntax (the document's pattern).
    let if_match = |tag: &str| {
        types::UpdatePetIfMatch::try_from(tag)
            .map_err(|e| format!("the generated If-Match type refused {tag}: {e}"))
    };
    let rename = types::PetPatch {
        name: Some("Tommy".try_into().map_err(|e| format!("pet name: {e}"))?),
        ..Default::default()
    };
    let renamed = expect_status(
        "updatePet with If-Match",
        api.update_pet(id, None, Some(&if_match(tag)?), &rename)
            .await,
        StatusCode::OK,
    )?;
    let new_tag = header_str(&renamed, header::ETAG).ok_or("updatePet answered without an ETag")?;
    let renamed = renamed.into_inner();
    ensure!(
        renamed.id == id && renamed.name.as_str() == "Tommy",
        "updatePet answered {renamed:?}"
    );
    ensure!(
        new_tag != tag,
        "updatePet changed the pet but kept its ETag {tag}"
    );

    let to_pending = types::PetPatch {
        status: Some(types::PetStatus::Pending),
        ..Default::default()
    };
    expect_error(
        "updatePet with the stale If-Match",
        api.update_pet(id, None, Some(&if_match(tag)?), &to_pending)
            .await,
        412,
        "precondition_failed",
    )?;
    let ids = vec![id];
    let kept = expect_status(
        "listPets after the refused change",
        api.list_pets(None, None, Some(&ids), None, None, None, None, None)
            .await,
        StatusCode::OK,
    )?
    .into_inner()
    .0;
    ensure!(
        kept.len() == 1
            && kept[0].name.as_str() == "Tommy"
            && kept[0].status == types::PetStatus::Available,
        "the refused change changed the pet: {kept:?}"
    );

    expect_status(
        "deletePet with If-Match",
        api.delete_pet(
            id,
            Some(
                &types::DeletePetIfMatch::try_from(new_tag.as_str())
                    .map_err(|e| format!("the generated If-Match type refused {new_tag}: {e}"))?,
            ),
        )
        .await,
        StatusCode::NO_CONTENT,
    )?;
    expect_error(
        "deletePet again",
        api.delete_pet(id, None).await,
        404,
        "not_found",
    )?;
    #[allow(deprecated)]
    let result = api.get_pet(id, None).await;
    expect_error("getPet of the removed pet", result, 404, "not_found")?;
    Ok(format!(
        "pet {id} renamed with If-Match, 412 with the stale tag, deleted (204, then 404)"
    ))
}

/// createWebhookEndpoint answers the endpoint with its signing secret; listWebhookEndpoints lists
/// it; deleteWebhookEndpoint is 204, then 404. Added disabled, so that nothing is ever posted to
/// it.
async fn webhook_endpoint(api: &Client) -> Outcome<String> {
    let url = "https://hooks.example.com/walk-through";
    let body = types::NewWebhookEndpoint {
        url: url
            .try_into()
            .map_err(|e| format!("the generated URL type refused {url}: {e}"))?,
        event_types: vec!["pet.*"
            .parse()
            .map_err(|e| format!("the generated event type refused pet.*: {e}"))?],
        enabled: Some(false),
    };
    let created = expect_status(
        "createWebhookEndpoint",
        api.create_webhook_endpoint(None, &body).await,
        StatusCode::CREATED,
    )?;
    let location = header_str(&created, header::LOCATION);
    let created = created.into_inner();
    ensure!(
        created.url == url
            && created.event_types == ["pet.created", "pet.updated", "pet.removed"]
            && !created.enabled
            && created
                .secret
                .as_ref()
                .is_some_and(|secret| secret.starts_with("whsec_")),
        "createWebhookEndpoint answered {created:?}"
    );
    ensure!(
        location.as_deref() == Some(format!("/v1/webhook-endpoints/{}", created.id).as_str()),
        "createWebhookEndpoint: Location {location:?}"
    );
    let listed = expect_status(
        "listWebhookEndpoints",
        api.list_webhook_endpoints(None, None).await,
        StatusCode::OK,
    )?
    .into_inner();
    ensure!(
        listed.len() == 1 && listed[0].id == created.id && listed[0].url == url,
        "listWebhookEndpoints answered {listed:?}"
    );
    expect_status(
        "deleteWebhookEndpoint",
        api.delete_webhook_endpoint(created.id).await,
        StatusCode::NO_CONTENT,
    )?;
    expect_error(
        "deleteWebhookEndpoint again",
        api.delete_webhook_endpoint(created.id).await,
        404,
        "not_found",
    )?;
    Ok(format!(
        "webhook endpoint {} created with its secret, listed, deleted (204, then 404)",
        created.id
    ))
}

fn new_pet(name: &str, category_id: u64) -> Outcome<types::NewPet> {
    Ok(types::NewPet {
        name: name
            .try_into()
            .map_err(|e| format!("pet name {name:?}: {e}"))?,
        category_id: NonZeroU64::new(category_id).ok_or("categoryId 0")?,
        description: None,
        photo_urls: None,
        price: None,
        status: None,
        tags: None,
    })
}

/// Follows listPets' `Link: <...>; rel="next"` from the first page until a page has none;
/// returns the ids seen, in order, and the number of pages.
async fn page_through(api: &Client, origin: &Url, ids: &[i64]) -> Outcome<(Vec<i64>, usize)> {
    let ids = ids.to_vec();
    let limit = std::num::NonZeroU32::new(PAGE_LIMIT);
    let mut cursor: Option<types::ListPetsCursor> = None;
    let mut seen = Vec::new();
    for page in 1..=PAGED_PETS + 1 {
        let response = expect_status(
            &format!("listPets page {page}"),
            api.list_pets(
                None,
                cursor.as_ref(),
                Some(&ids),
                limit,
                None,
                None,
                None,
                None,
            )
            .await,
            StatusCode::OK,
        )?;
        let link = header_str(&response, header::LINK);
        let pets = response.into_inner().0;
        ensure!(
            pets.len() <= PAGE_LIMIT as usize,
            "listPets page {page} holds {} pets, over limit {PAGE_LIMIT}",
            pets.len()
        );
        seen.extend(pets.iter().map(|pet| pet.id));
        let Some(link) = link else {
            return Ok((seen, page));
        };
        let next = next_link(&link)
            .ok_or_else(|| format!("listPets page {page}: no rel=\"next\" in Link {link:?}"))?;
        let url = origin
            .join(&next)
            .map_err(|e| format!("listPets page {page}: Link target {next:?}: {e}"))?;
        ensure!(
            url.path() == "/v1/pets",
            "listPets page {page}: Link points at {url}"
        );
        let linked_ids: Vec<i64> = url
            .query_pairs()
            .filter(|(name, _)| name == "id")
            .filter_map(|(_, value)| value.parse().ok())
            .collect();
        ensure!(
            linked_ids == ids,
            "listPets page {page}: the next link lost the id filter: {url}"
        );
        let next_cursor = url
            .query_pairs()
            .find(|(name, _)| name == "cursor")
            .map(|(_, value)| value.into_owned())
            .ok_or_else(|| format!("listPets page {page}: the next link has no cursor: {url}"))?;
        cursor = Some(next_cursor.as_str().try_into().map_err(|e| {
            format!("listPets page {page}: the generated type refuses cursor {next_cursor:?}: {e}")
        })?);
    }
    Err(format!(
        "listPets: still a next link after {} pages",
        PAGED_PETS + 1
    ))
}

// docs/generated-clients.md shows the lines between the markers; tests/clients/run.sh checks
// that it shows them as they are here.
// begin: every_pet
/// Every pet listPets answers for `ids`, page after page, by `Link: rel="next"`.
async fn every_pet(api: &Client, ids: &[i64]) -> Result<Vec<types::Pet>, String> {
    let ids = ids.to_vec();
    let mut pets = Vec::new();
    let mut cursor: Option<types::ListPetsCursor> = None;
    loop {
        let page = api
            .list_pets(
                None,
                cursor.as_ref(),
                Some(&ids),
                None,
                None,
                None,
                None,
                None,
            )
            .await
            .map_err(|e| e.to_string())?;
        let link = page.headers().get(header::LINK).cloned();
        pets.extend(page.into_inner().0);
        let Some(next) = link.and_then(|value| next_link(value.to_str().ok()?)) else {
            return Ok(pets);
        };
        let url = Url::parse("http://next.invalid/")
            .and_then(|base| base.join(&next))
            .map_err(|e| e.to_string())?;
        let (_, next_cursor) = url
            .query_pairs()
            .find(|(name, _)| name == "cursor")
            .ok_or("a next link without a cursor")?;
        let next_cursor: types::ListPetsCursor = next_cursor
            .as_ref()
            .try_into()
            .map_err(|e| format!("{e}"))?;
        cursor = Some(next_cursor);
    }
}

/// The target of the `rel="next"` link of a `Link` header value (RFC 8288).
fn next_link(value: &str) -> Option<String> {
    value.split(',').find_map(|link| {
        let (target, params) = link.trim().split_once(';')?;
        let is_next = params
            .split(';')
            .any(|param| matches!(param.trim(), "rel=\"next\"" | "rel=next"));
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| target.to_owned())
    })
}
// end: every_pet

async fn expect_pet_status(
    api: &Client,
    id: i64,
    status: types::PetStatus,
    when: &str,
) -> Outcome<()> {
    // listPets by id, getPet's documented replacement.
    let ids = vec![id];
    let pets = expect_status(
        &format!("listPets?id={id} {when}"),
        api.list_pets(None, None, Some(&ids), None, None, None, None, None)
            .await,
        StatusCode::OK,
    )?
    .into_inner()
    .0;
    ensure!(
        pets.len() == 1 && pets[0].id == id && pets[0].status == status,
        "listPets?id={id} {when} answered {pets:?}, expected the pet {status}"
    );
    Ok(())
}

fn header_str<T>(response: &ResponseValue<T>, name: header::HeaderName) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// A success with this status, parsed as the documented type.
fn expect_status<T: std::fmt::Debug>(
    what: &str,
    result: Result<ResponseValue<T>, ClientError<types::Error>>,
    status: StatusCode,
) -> Outcome<ResponseValue<T>> {
    match result {
        Ok(response) if response.status() == status => Ok(response),
        Ok(response) => Err(format!(
            "{what}: expected {status}, got {}: {:?}",
            response.status(),
            response.into_inner()
        )),
        Err(ClientError::ErrorResponse(response)) => Err(format!(
            "{what}: expected {status}, got {}: {:?}",
            response.status(),
            response.into_inner()
        )),
        Err(other) => Err(format!("{what}: expected {status}, got {other}")),
    }
}

/// An error response that reached the caller typed: `Error::ErrorResponse` with the generated
/// `types::Error`, whose `code` and `status` are the expected ones. Anything else (an untyped
/// `UnexpectedResponse`, a body that failed to parse, a success) is a failure.
fn expect_error<T: std::fmt::Debug>(
    what: &str,
    result: Result<ResponseValue<T>, ClientError<types::Error>>,
    status: u16,
    code: &str,
) -> Outcome<types::Error> {
    match result {
        Err(ClientError::ErrorResponse(response)) => {
            let http = response.status().as_u16();
            let error: types::Error = response.into_inner();
            ensure!(
                http == status && error.code == code && error.status == i32::from(status),
                "{what}: expected {status} `{code}`, got HTTP {http} with {error:?}"
            );
            Ok(error)
        }
        Ok(response) => Err(format!(
            "{what}: expected {status} `{code}`, got {}: {:?}",
            response.status(),
            response.into_inner()
        )),
        Err(other) => Err(format!(
            "{what}: expected {status} `{code}` as a typed Error, got {other}"
        )),
    }
}
