"""The README's walk-through, run with the client openapi-python-client generated from the
committed docs/openapi.json (tests/clients/python/generate.sh), against a live server:

    PETSTORE_URL=http://127.0.0.1:PORT/v1 PETSTORE_KEY=<write key> \
        PYTHONPATH=target/clients/python python walkthrough.py

Every call goes through the generated `*_detailed` functions: a success must parse as the
documented model, and every error must reach this code as the generated `Error` model (not
`None`, not an `UnexpectedStatus`) with the expected `code` and `status`. Any mismatch prints
what was expected and what came, and exits 1. tests/clients/run.sh generates and runs it; one
summary line on success.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from petstore_client import AuthenticatedClient, Client
from petstore_client.api.events import list_events
from petstore_client.api.pets import create_pet, delete_pet, get_pet, list_pets, update_pet
from petstore_client.api.store import approve_order, deliver_order, get_order, place_order
from petstore_client.api.webhooks import (
    create_webhook_endpoint,
    delete_webhook_endpoint,
    list_webhook_endpoints,
)
from petstore_client.models import (
    Category,
    CategoryEvent,
    CategoryEventType,
    Error,
    NewOrder,
    NewPet,
    NewWebhookEndpoint,
    Order,
    OrderEvent,
    OrderEventType,
    OrderStatus,
    Pet,
    PetEvent,
    PetEventType,
    PetPatch,
    PetStatus,
    WebhookEndpoint,
    WebhookEndpointWithSecret,
)
from petstore_client.types import Response

PAGED_PETS = 45
PAGE_LIMIT = 10
# Events a page of listEvents holds at most in the walk-through's reads.
EVENT_PAGE_LIMIT = 20

Event = PetEvent | OrderEvent | CategoryEvent


class Mismatch(Exception):
    pass


def ensure(condition: bool, message: str) -> None:
    if not condition:
        raise Mismatch(message)


def expect(what: str, response: Response[Any], status: HTTPStatus, model: type) -> Any:
    """A success with this status, parsed as the documented model."""
    ensure(
        response.status_code == status,
        f"{what}: expected {status.value}, got {response.status_code.value}: {response.content!r}",
    )
    ensure(
        isinstance(response.parsed, model),
        f"{what}: expected a {model.__name__}, got {response.parsed!r}",
    )
    return response.parsed


def expect_error(what: str, response: Response[Any], status: int, code: str) -> Error:
    """An error that reached the caller typed: the generated `Error` with this code and status."""
    error = response.parsed
    ensure(
        isinstance(error, Error),
        f"{what}: expected {status} `{code}` as the generated Error, got HTTP "
        f"{response.status_code.value} parsed as {error!r}: {response.content!r}",
    )
    ensure(
        response.status_code == status and error.code == code and error.status == status,
        f"{what}: expected {status} `{code}`, got HTTP {response.status_code.value} with {error!r}",
    )
    return error


# docs/generated-clients.md shows the lines between the markers; tests/clients/run.sh checks
# that it shows them as they are here.
# begin: every_pet
def next_link(value: str | None) -> str | None:
    """The target of the `rel="next"` link of a `Link` header value (RFC 8288)."""
    for link in (value or "").split(","):
        target, _, params = link.strip().partition(";")
        if any(p.strip() in ('rel="next"', "rel=next") for p in params.split(";")):
            return target.strip().removeprefix("<").removesuffix(">")
    return None


def every_pet(client: AuthenticatedClient, **filters: Any) -> Iterator[Pet]:
    """Every pet listPets answers for `filters`, page after page, by `Link: rel="next"`."""
    cursor: str | None = None
    while True:
        query = filters if cursor is None else {**filters, "cursor": cursor}
        response = list_pets.sync_detailed(client=client, **query)
        if not isinstance(response.parsed, list):
            raise RuntimeError(f"listPets: {response.status_code} {response.parsed!r}")
        yield from response.parsed
        target = next_link(response.headers.get("link"))
        if target is None:
            return
        cursor = parse_qs(urlsplit(target).query)["cursor"][0]
# end: every_pet


def page_through(api: AuthenticatedClient, base: str, ids: list[int]) -> tuple[list[int], int]:
    """Follows listPets' `Link: rel="next"` from the first page until a page has none."""
    seen: list[int] = []
    cursor: str | None = None
    for page in range(1, PAGED_PETS + 2):
        kwargs: dict[str, Any] = {"id": ids, "limit": PAGE_LIMIT}
        if cursor is not None:
            kwargs["cursor"] = cursor
        response = list_pets.sync_detailed(client=api, **kwargs)
        pets = expect(f"listPets page {page}", response, HTTPStatus.OK, list)
        ensure(all(isinstance(p, Pet) for p in pets), f"listPets page {page}: {pets!r}")
        ensure(len(pets) <= PAGE_LIMIT, f"listPets page {page} holds {len(pets)} pets")
        seen.extend(p.id for p in pets)
        link = response.headers.get("link")
        if link is None:
            return seen, page
        target = next_link(link)
        ensure(target is not None, f"listPets page {page}: no rel=\"next\" in Link {link!r}")
        url = urlsplit(urljoin(base, target))
        ensure(url.path == "/v1/pets", f"listPets page {page}: Link points at {target}")
        query = parse_qs(url.query)
        ensure(
            [int(i) for i in query.get("id", [])] == ids,
            f"listPets page {page}: the next link lost the id filter: {target}",
        )
        ensure(len(query.get("cursor", [])) == 1, f"listPets page {page}: no cursor in {target}")
        cursor = query["cursor"][0]
    raise Mismatch(f"listPets: still a next link after {PAGED_PETS + 1} pages")


def expect_pet_status(api: AuthenticatedClient, pet_id: int, status: PetStatus, when: str) -> None:
    # listPets by id, getPet's documented replacement.
    pets = expect(
        f"listPets?id={pet_id} {when}",
        list_pets.sync_detailed(client=api, id=[pet_id]),
        HTTPStatus.OK,
        list,
    )
    ensure(
        len(pets) == 1 and pets[0].id == pet_id and pets[0].status == status,
        f"listPets?id={pet_id} {when} answered {pets!r}, expected the pet {status.value}",
    )


def response_tag(what: str, response: Response[Any]) -> str:
    tag = response.headers.get("etag")
    ensure(tag is not None, f"{what} answered without an ETag: {dict(response.headers)}")
    return tag


def change_and_remove(api: AuthenticatedClient, pet_id: int, tag: str) -> str:
    """The staff's changes to a pet whose `ETag` (from createPet) is `tag`: updatePet with
    `If-Match` renames it and answers a new tag; the old tag is then stale, so a second change
    with it is 412 and changes nothing; deletePet with the new tag is 204, and a second
    deletePet 404."""
    response = update_pet.sync_detailed(
        pet_id, client=api, body=PetPatch(name="Tommy"), if_match=tag
    )
    renamed = expect("updatePet with If-Match", response, HTTPStatus.OK, Pet)
    ensure(renamed.id == pet_id and renamed.name == "Tommy", f"updatePet answered {renamed!r}")
    new_tag = response_tag("updatePet", response)
    ensure(new_tag != tag, f"updatePet changed the pet but kept its ETag {tag}")

    expect_error(
        "updatePet with the stale If-Match",
        update_pet.sync_detailed(
            pet_id, client=api, body=PetPatch(status=PetStatus.PENDING), if_match=tag
        ),
        412,
        "precondition_failed",
    )
    kept = expect(
        "listPets after the refused change",
        list_pets.sync_detailed(client=api, id=[pet_id]),
        HTTPStatus.OK,
        list,
    )
    ensure(
        len(kept) == 1 and kept[0].name == "Tommy" and kept[0].status == PetStatus.AVAILABLE,
        f"the refused change changed the pet: {kept!r}",
    )

    response = delete_pet.sync_detailed(pet_id, client=api, if_match=new_tag)
    ensure(
        response.status_code == HTTPStatus.NO_CONTENT and response.content == b"",
        f"deletePet with If-Match: expected 204, got {response.status_code.value}: "
        f"{response.content!r}",
    )
    expect_error("deletePet again", delete_pet.sync_detailed(pet_id, client=api), 404, "not_found")
    expect_error(
        "getPet of the removed pet", get_pet.sync_detailed(pet_id, client=api), 404, "not_found"
    )
    return f"pet {pet_id} renamed with If-Match, 412 with the stale tag, deleted (204, then 404)"


def webhook_endpoint(api: AuthenticatedClient) -> str:
    """createWebhookEndpoint answers the endpoint with its signing secret; listWebhookEndpoints
    lists it without the secret; deleteWebhookEndpoint is 204, then 404. Added disabled, so that
    nothing is ever posted to it."""
    url = "https://hooks.example.com/walk-through"
    response = create_webhook_endpoint.sync_detailed(
        client=api, body=NewWebhookEndpoint(url=url, event_types=["pet.*"], enabled=False)
    )
    created = expect(
        "createWebhookEndpoint", response, HTTPStatus.CREATED, WebhookEndpointWithSecret
    )
    ensure(
        created.url == url
        and created.event_types == ["pet.created", "pet.updated", "pet.removed"]
        and not created.enabled
        and isinstance(created.secret, str)
        and created.secret.startswith("whsec_"),
        f"createWebhookEndpoint answered {created!r}",
    )
    location = response.headers.get("location")
    ensure(
        location == f"/v1/webhook-endpoints/{created.id}",
        f"createWebhookEndpoint: Location {location!r}",
    )
    listed = expect(
        "listWebhookEndpoints",
        list_webhook_endpoints.sync_detailed(client=api),
        HTTPStatus.OK,
        list,
    )
    ensure(
        [(e.id, e.url) for e in listed] == [(created.id, url)]
        and all(isinstance(e, WebhookEndpoint) for e in listed)
        and "secret" not in listed[0].additional_properties,
        f"listWebhookEndpoints answered {listed!r}",
    )
    response = delete_webhook_endpoint.sync_detailed(created.id, client=api)
    ensure(
        response.status_code == HTTPStatus.NO_CONTENT,
        f"deleteWebhookEndpoint: expected 204, got {response.status_code.value}: "
        f"{response.content!r}",
    )
    expect_error(
        "deleteWebhookEndpoint again",
        delete_webhook_endpoint.sync_detailed(created.id, client=api),
        404,
        "not_found",
    )
    return f"webhook endpoint {created.id} created with its secret, listed, deleted (204, then 404)"


def subject(event: Event) -> tuple[str, int]:
    """What an event is about, by the generated model its `type` names: the type and the id of
    its `data`, which is the model of that resource."""
    if isinstance(event, PetEvent):
        ensure(
            isinstance(event.type_, PetEventType) and isinstance(event.data, Pet),
            f"a PetEvent typed otherwise: {event!r}",
        )
    elif isinstance(event, OrderEvent):
        ensure(
            isinstance(event.type_, OrderEventType) and isinstance(event.data, Order),
            f"an OrderEvent typed otherwise: {event!r}",
        )
    else:
        ensure(
            isinstance(event, CategoryEvent)
            and isinstance(event.type_, CategoryEventType)
            and isinstance(event.data, Category),
            f"not one of the generated event models: {event!r}",
        )
    ensure(
        event.id.startswith("evt_") and event.timestamp.tzinfo is not None,
        f"an event with id {event.id!r} and timestamp {event.timestamp!r}",
    )
    return event.type_.value, event.data.id


def read_events(
    api: AuthenticatedClient, base: str, what: str, **query: Any
) -> tuple[list[Event], str, bool]:
    """One listEvents read: its events, the cursor of its `Link: rel="next"` (every page has one,
    back to the feed with the same `types`) and `X-More-Events`."""
    response = list_events.sync_detailed(client=api, **query)
    events = expect(what, response, HTTPStatus.OK, list)
    more = response.headers.get("x-more-events")
    ensure(more in ("true", "false"), f"{what}: X-More-Events {more!r}")
    target = next_link(response.headers.get("link"))
    ensure(target is not None, f'{what}: no rel="next" in Link {response.headers.get("link")!r}')
    url = urlsplit(urljoin(base, target))
    ensure(url.path == "/v1/events", f"{what}: Link points at {target}")
    linked = parse_qs(url.query)
    ensure(
        linked.get("types") == ([query["types"]] if "types" in query else None),
        f"{what}: the next link lost the types: {target}",
    )
    ensure(len(linked.get("cursor", [])) == 1, f"{what}: no cursor in {target}")
    return events, linked["cursor"][0], more == "true"


def read_the_feed(
    api: AuthenticatedClient, base: str, changes_made: list[tuple[str, int]], order_id: int
) -> str:
    """The feed after the walk-through's changes (`changes_made`, each a type and the id of the
    resource changed): read page by page by `Link` until `X-More-Events` is `false`, every event
    the generated model its `type` names; the end's cursor gives nothing more until one more
    change, then that change alone; `types=order.*` the order's events alone, and its cursor sent
    without those types is a typed 400."""
    events: list[Event] = []
    query: dict[str, Any] = {"limit": EVENT_PAGE_LIMIT}
    pages = 0
    while True:
        pages += 1
        ensure(pages <= len(changes_made), f"listEvents: still more events after {pages} pages")
        page, end, more = read_events(api, base, f"listEvents page {pages}", **query)
        ensure(len(page) <= EVENT_PAGE_LIMIT, f"listEvents page {pages} holds {len(page)} events")
        events.extend(page)
        if not more:
            break
        query["cursor"] = end
    read = [subject(event) for event in events]
    ensure(
        read == changes_made,
        f"listEvents by Link read (type, data.id) {read}, expected {changes_made}",
    )
    ensure(
        len({event.id for event in events}) == len(events), f"listEvents: ids repeat: {events!r}"
    )
    # Each event carries its resource as it was right after the change.
    removed = [
        e.data for e in events if isinstance(e, PetEvent) and e.type_ == PetEventType.PET_REMOVED
    ]
    ensure(
        [pet.name for pet in removed] == ["Tommy"],
        f"pet.removed carries {removed!r}, expected the pet as it was when removed (Tommy)",
    )
    delivered = [
        e.data
        for e in events
        if isinstance(e, OrderEvent) and e.type_ == OrderEventType.ORDER_DELIVERED
    ]
    ensure(
        len(delivered) == 1
        and delivered[0].status == OrderStatus.DELIVERED
        and delivered[0].complete,
        f"order.delivered carries {delivered!r}",
    )

    # The end's cursor: nothing since, until one more change.
    nothing, _, more = read_events(
        api, base, "listEvents from the end", limit=EVENT_PAGE_LIMIT, cursor=end
    )
    ensure(
        nothing == [] and not more,
        f"listEvents from the end of the feed answered {nothing!r} (X-More-Events {more})",
    )
    felix = expect(
        "createPet Felix",
        create_pet.sync_detailed(client=api, body=NewPet(name="Felix", category_id=1)),
        HTTPStatus.CREATED,
        Pet,
    )
    since, _, _ = read_events(
        api, base, "listEvents from the end after createPet", limit=EVENT_PAGE_LIMIT, cursor=end
    )
    ensure(
        [subject(event) for event in since] == [("pet.created", felix.id)],
        f"listEvents from the end after createPet Felix ({felix.id}) answered {since!r}",
    )

    # types=order.*: the order's events alone; the cursor of that read is for those types only.
    orders, order_cursor, more = read_events(api, base, "listEvents?types=order.*", types="order.*")
    read = [subject(event) for event in orders]
    expected = [(kind, order_id) for kind in ("order.placed", "order.approved", "order.delivered")]
    ensure(
        read == expected and not more,
        f"listEvents?types=order.* answered {read} (X-More-Events {more}), expected {expected}",
    )
    expect_error(
        "listEvents with the cursor of types=order.* without types",
        list_events.sync_detailed(client=api, cursor=order_cursor),
        400,
        "invalid_parameter",
    )
    return (
        f"listEvents {len(events)} events in {pages} pages by Link in order, 1 more since the end, "
        f"{len(orders)} by types=order.*"
    )


def walkthrough(base: str, key: str) -> str:
    api = AuthenticatedClient(base_url=base, token=key, raise_on_unexpected_status=True)

    # createPet: 201, the typed pet and its Location.
    response = create_pet.sync_detailed(client=api, body=NewPet(name="Rex", category_id=3))
    rex = expect("createPet Rex", response, HTTPStatus.CREATED, Pet)
    ensure(
        rex.name == "Rex" and rex.category_id == 3 and rex.status == PetStatus.AVAILABLE,
        f"createPet Rex answered {rex!r}",
    )
    location = response.headers.get("location")
    ensure(location == f"/v1/pets/{rex.id}", f"createPet Rex: Location {location!r}")

    # createPet with an Idempotency-Key, sent twice as a client retrying would: the second
    # answer is the first again, marked as replayed, and only one pet is stored.
    tom = NewPet(name="Tom", category_id=2)
    first_response = create_pet.sync_detailed(
        client=api, body=tom, idempotency_key='"walk-through-tom-1"'
    )
    first = expect("createPet Tom with Idempotency-Key", first_response, HTTPStatus.CREATED, Pet)
    retry_response = create_pet.sync_detailed(
        client=api, body=tom, idempotency_key='"walk-through-tom-1"'
    )
    retry = expect("createPet Tom retried", retry_response, HTTPStatus.CREATED, Pet)
    replayed = retry_response.headers.get("idempotent-replayed")
    ensure(
        replayed == "true" and retry.id == first.id,
        f"the retry was not replayed: {retry!r} (Idempotent-Replayed {replayed!r}) after {first!r}",
    )
    tom_tag = response_tag("createPet Tom", first_response)

    # 45 more pets, then listPets by their ids, 10 a page, following `Link: rel="next"`.
    created = []
    for n in range(1, PAGED_PETS + 1):
        name = f"Chien nº {n} 🐕"
        pet = expect(
            f"createPet {name}",
            create_pet.sync_detailed(client=api, body=NewPet(name=name, category_id=1 + n % 5)),
            HTTPStatus.CREATED,
            Pet,
        )
        ensure(pet.name == name, f"createPet {name} answered {pet!r}")
        created.append(pet.id)
    seen, pages = page_through(api, base, created)
    ensure(
        seen == created,
        f"paging listPets?id=<the {PAGED_PETS} pets>&limit={PAGE_LIMIT} by Link saw {seen}, "
        f"expected {created} (each once, in id order)",
    )
    expected_pages = -(-PAGED_PETS // PAGE_LIMIT)
    ensure(pages == expected_pages, f"paging took {pages} pages, expected {expected_pages}")
    walked = [pet.id for pet in every_pet(api, id=created, limit=PAGE_LIMIT)]
    ensure(walked == created, f"every_pet (docs/generated-clients.md) gave {walked}")

    # getPet: deprecated, still 200 with the pet and the deprecation headers.
    response = get_pet.sync_detailed(rex.id, client=api)
    got = expect("getPet", response, HTTPStatus.OK, Pet)
    ensure(got.id == rex.id and got.name == "Rex", f"getPet answered {got!r}")
    ensure(
        "deprecation" in response.headers and "sunset" in response.headers,
        f"getPet answered without Deprecation and Sunset: {dict(response.headers)}",
    )

    changes = change_and_remove(api, first.id, tom_tag)

    # placeOrder, approveOrder, deliverOrder: the pet goes pending, then sold.
    response = place_order.sync_detailed(client=api, body=NewOrder(pet_id=rex.id))
    order = expect("placeOrder", response, HTTPStatus.CREATED, Order)
    ensure(
        order.pet_id == rex.id
        and order.status == OrderStatus.PLACED
        and not order.complete
        and order.ship_date is None
        and order.quantity == 1,
        f"placeOrder answered {order!r}",
    )
    location = response.headers.get("location")
    ensure(location == f"/v1/store/orders/{order.id}", f"placeOrder: Location {location!r}")
    expect_pet_status(api, rex.id, PetStatus.PENDING, "after placeOrder")

    approved = expect(
        "approveOrder", approve_order.sync_detailed(order.id, client=api), HTTPStatus.OK, Order
    )
    ensure(
        approved.id == order.id and approved.status == OrderStatus.APPROVED and not approved.complete,
        f"approveOrder answered {approved!r}",
    )
    delivered = expect(
        "deliverOrder", deliver_order.sync_detailed(order.id, client=api), HTTPStatus.OK, Order
    )
    ensure(
        delivered.id == order.id
        and delivered.status == OrderStatus.DELIVERED
        and delivered.complete
        and delivered.ship_date is not None
        and delivered.ship_date.tzinfo is not None,
        f"deliverOrder answered {delivered!r}",
    )
    fetched = expect("getOrder", get_order.sync_detailed(order.id, client=api), HTTPStatus.OK, Order)
    ensure(
        fetched.status == OrderStatus.DELIVERED and fetched.complete,
        f"getOrder after deliverOrder answered {fetched!r}",
    )
    expect_pet_status(api, rex.id, PetStatus.SOLD, "after deliverOrder")
    # The README's own listing, by status: on this fresh server only Rex was sold.
    response = list_pets.sync_detailed(client=api, status=PetStatus.SOLD, limit=10)
    sold = expect("listPets?status=sold&limit=10", response, HTTPStatus.OK, list)
    ensure("link" not in response.headers, "listPets?status=sold has a next page")
    ensure(
        [pet.id for pet in sold] == [rex.id],
        f"listPets?status=sold answered {sold!r}, expected only Rex ({rex.id})",
    )

    # Errors, each the generated `Error` model with its code and status.
    errors = []
    error = expect_error(
        "createPet categoryId 0",
        create_pet.sync_detailed(client=api, body=NewPet(name="Zero", category_id=0)),
        400,
        "validation_failed",
    )
    ensure("categoryId" in error.message, f"the message does not name categoryId: {error.message!r}")
    errors.append(400)
    expect_error(
        "listPets limit=0",
        list_pets.sync_detailed(client=api, limit=0),
        400,
        "invalid_parameter",
    )
    errors.append(400)
    no_key = Client(base_url=base, raise_on_unexpected_status=True)
    expect_error(
        "listPets without a key",
        # The generated functions are typed for AuthenticatedClient; the plain Client works alike.
        list_pets.sync_detailed(client=no_key),  # type: ignore[arg-type]
        401,
        "unauthorized",
    )
    errors.append(401)
    bogus = AuthenticatedClient(base_url=base, token="not-a-key", raise_on_unexpected_status=True)
    expect_error(
        "createPet with a bogus key",
        create_pet.sync_detailed(client=bogus, body=NewPet(name="Nobody", category_id=1)),
        401,
        "unauthorized",
    )
    errors.append(401)
    missing = max(created) + 1_000_000
    expect_error("getPet of a missing pet", get_pet.sync_detailed(missing, client=api), 404, "not_found")
    errors.append(404)
    expect_error(
        "getOrder of a missing order",
        get_order.sync_detailed(order.id + 1_000_000, client=api),
        404,
        "not_found",
    )
    errors.append(404)
    expect_error(
        "placeOrder for a sold pet",
        place_order.sync_detailed(client=api, body=NewOrder(pet_id=rex.id)),
        409,
        "conflict",
    )
    errors.append(409)
    expect_error(
        "deliverOrder of a delivered order",
        deliver_order.sync_detailed(order.id, client=api),
        409,
        "conflict",
    )
    errors.append(409)

    # The feed: every change above, in the order it was made, and none of the refused ones (nor
    # the replayed retry). Placing the order made Rex pending and delivering it made him sold.
    changes_made = [("pet.created", rex.id), ("pet.created", first.id)]
    changes_made += [("pet.created", pet_id) for pet_id in created]
    changes_made += [
        ("pet.updated", first.id),
        ("pet.removed", first.id),
        ("pet.updated", rex.id),
        ("order.placed", order.id),
        ("order.approved", order.id),
        ("order.delivered", order.id),
        ("pet.updated", rex.id),
    ]
    feed = read_the_feed(api, base, changes_made, order.id)
    webhooks = webhook_endpoint(api)

    return (
        f"createPet x{PAGED_PETS + 1}, listPets {PAGED_PETS} pets in {pages} pages by Link, getPet, "
        f"{changes}, order {order.id} placed/approved/delivered (pet sold), {len(errors)} typed errors "
        f"({', '.join(map(str, errors))}), {feed}, {webhooks}"
    )


def main() -> int:
    base, key = os.environ.get("PETSTORE_URL"), os.environ.get("PETSTORE_KEY")
    if not base or not key:
        print("python: set PETSTORE_URL (http://HOST:PORT/v1) and PETSTORE_KEY", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        summary = walkthrough(base.rstrip("/"), key)
    except Mismatch as mismatch:
        print(f"openapi-python-client: walk-through FAILED: {mismatch}", file=sys.stderr)
        return 1
    print(
        f"openapi-python-client: walk-through passed in {time.monotonic() - start:.1f} s: {summary}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
