"""Schemathesis hooks for `make contract` (loaded through tests/contract/schemathesis.toml).

One service rule that JSON Schema cannot state is applied to requests Schemathesis generated as
valid, so its positive-data check tests what the contract really promises: cursors.

listPets' `cursor` is opaque and signed: only a cursor the service issued (in a `Link:
rel="next"` header) is valid, and only with the `status` filter it was issued for; anything else
is 400 `invalid_parameter`, as the document says. No JSON Schema can describe "signed by the
server", so a generated string is never a valid cursor, and the positive-data check would report
every one. Instead, a request that Schemathesis generated as valid gets a real cursor, issued by
this server for the request's own `status`: the check then proves what the contract promises
(every issued cursor works with any valid `limit`); with search filters (`categoryId`, `tag`,
`name`, which cursors are bound to as well) it gets one issued for those filters and its `id`s
(a search by name alone is in name order, a lookup by id in id order, and each takes only the
cursors of its own order), or none when they match a single page. Requests generated as invalid keep their
cursor, so garbage cursors still reach the server (it must answer 4xx, never 5xx). listOrders'
cursor is signed the same way and bound to its `status` and `petId` filters: a valid request
gets a cursor the server issued for its filters, or none when no next page exists for them.
listCategories' cursor is signed too: a valid request gets one the server issued, or none while
there is no second page. listEvents' cursor is bound to the key and the `types` filter, and
every page links on: a valid request gets the one the server issued for its `types`.

A second rule is how integers travel in a path or a query string: as plain decimal digits
(docs/api.md: `limit`, `petId`). JSON Schema counts `217.0` as the integer 217, and Schemathesis,
carrying a whole number sent as `217.0` in a JSON body over a link into a path, writes it as
`217.0`, which the service refuses with 400 like any other non-digit text. A whole float in a
path or query parameter is therefore written as its digits, as every generated client does; a
value that is not a whole number is left for the server to refuse.

A third rule is what an `Idempotency-Key` means: one key, one request. Schemathesis draws the
header from its schema and often sends the same value (the example) with different bodies and
paths, which the service answers, as the document promises, with 422 `idempotency_key_reused`.
A request generated as valid therefore gets a key of its own (the drawn value with a counter
added, in the same bare or quoted form), so the positive-data check tests that a valid keyed
request is carried out; invalid keys still reach the server unchanged (400), and a key reused
within one stateful link (a retry) is still possible through the links Schemathesis follows.

A fourth rule is what a pet's `name` may hold: the domain's rule for human-entered names
(docs/api.md), stated in the document in words but not as a `pattern` (written out it is
thousands of ranges above the Basic Multilingual Plane, which the OpenAPI linters cannot read).
A createPet generated as valid therefore gets its name's refused characters (controls, format
characters, marks, surrogates, unassigned code points, separators other than spaces, the
Hangul fillers and the braille blank) replaced by `x`, and a blank name a visible first
character. The replacement is conservative (Python's Unicode tables may be older than the
service's: a character unassigned here is replaced too), so every name sent as valid is one the
rule accepts; names generated as invalid reach the server unchanged.

The same rule holds for every human-entered name: a valid updatePet's `name`, a valid
createCategory's or renameCategory's, and listPets' `name` search get the same replacement.

A fifth rule is Schemathesis' coverage phase sending `0` as a valid `If-Match` (updatePet,
deletePet), which the header's documented pattern (`*` or a list of entity tags) refuses and
the service answers with 400 as the document says. A request generated as valid whose
`If-Match` the pattern refuses is sent with `If-Match: *` instead; invalid values still reach
the server unchanged (400).

A sixth rule is what a pet's catalogue details may hold (docs/api.md, *Resources*), stated in
words: a tag follows the name rule, holds no comma and is at most 32 characters once
normalised; a description follows the name rule with line breaks allowed; a photo URL is an
absolute `https` URL with a host; a price's currency is an active ISO 4217 code and its amount
has no more decimals than the currency has. A createPet or updatePet generated as valid gets
its details made so (tags and the description by the name rule, commas replaced, cut to
length; photos as `https://example.com/...`; the price in EUR with at most two decimals), and
listPets' `tag` search the same as a tag; details generated as invalid reach the server
unchanged.

A seventh rule is where a webhook endpoint may point: an `https` URL whose host is resolved at
every delivery, stated in words in the document. A createWebhookEndpoint or
updateWebhookEndpoint generated as valid gets a URL on the host tests/contract/run.sh names in
PETSTORE_WEBHOOK_HOSTS, which the server resolves without DNS to a private address that every
delivery refuses before connecting: the run never reaches the network. URLs generated as invalid
reach the server unchanged. The webhook listings' cursors are signed like the others: a valid
listWebhookEndpoints gets one the server issued, or none while there is one page; a valid
listWebhookDeliveries one the server issued for its endpoint and `status`, or none when the
endpoint has no second page of such deliveries (or no longer exists).

tests/contract/run.sh passes the server's base URL and the key in CONTRACT_BASE_URL and
CONTRACT_API_KEY.
"""

import json
import os
import re
import threading
import unicodedata
import urllib.error
import urllib.parse
import urllib.request

import schemathesis
from hypothesis.internal import lambda_sources

# Hypothesis names a filter lambda in a strategy's description by parsing the lambda's source
# module with `ast.parse`. On the CPython 3.11 releases these machines have, that parse of
# Schemathesis' large coverage module sometimes fails with "SystemError: AST constructor
# recursion depth mismatch", which aborts the operation's whole coverage phase though nothing
# was tested yet. The description is only a label: when it cannot be made, a plain one does.
_describe_lambda = lambda_sources.lambda_description


def _lambda_description_or_label(f):
    try:
        return _describe_lambda(f)
    except SystemError:
        return "lambda"


lambda_sources.lambda_description = _lambda_description_or_label

BASE_URL = os.environ["CONTRACT_BASE_URL"]
API_KEY = os.environ["CONTRACT_API_KEY"]
STATUSES = ("available", "pending", "sold")

_lock = threading.Lock()
_cursors = {}
_order_cursors = {}


def _request(method, path, body=None):
    request = urllib.request.Request(
        BASE_URL + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Link", "")


def _issued_cursor(status):
    """A cursor the server issued for this `status` filter (None: no filter)."""
    with _lock:
        if status not in _cursors:
            query = "limit=1" + (f"&status={status}" if status else "")
            link = _request("GET", f"/pets?{query}")
            while 'rel="next"' not in link:
                # A next page needs at least two matching pets; make them with the API itself.
                _request("POST", "/pets", {"name": "cursor seed", "categoryId": 1, "status": status or "available"})
                link = _request("GET", f"/pets?{query}")
            match = re.search(r"[?&]cursor=([^&>]+)", link)
            assert match, f"no cursor in the next link: {link}"
            _cursors[status] = urllib.request.unquote(match.group(1))
        return _cursors[status]


def _generated_as_valid(case):
    meta = case.meta
    return meta is None or meta.generation.mode == "positive"


def _as_digits(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_as_digits(item) for item in value]
    return value


def _integers_as_digits(case):
    """Whole floats in path and query parameters written as the integers they are."""
    if case.path_parameters and any(isinstance(v, float) for v in case.path_parameters.values()):
        case.path_parameters = {name: _as_digits(value) for name, value in case.path_parameters.items()}
    if case.query and any(isinstance(v, (float, list)) for v in case.query.values()):
        case.query = {name: _as_digits(value) for name, value in case.query.items()}


_keys_sent = iter(range(1, 1 << 62))


def _idempotency_key_of_its_own(case):
    """A valid request's `Idempotency-Key` made unique: the drawn key plus a counter."""
    if not case.headers or "Idempotency-Key" not in case.headers or not _generated_as_valid(case):
        return
    drawn = str(case.headers["Idempotency-Key"])
    with _lock:
        suffix = f"-{next(_keys_sent)}"
    quoted = len(drawn) >= 2 and drawn.startswith('"') and drawn.endswith('"')
    inner = drawn[1:-1] if quoted else drawn
    # Keep within 255 characters of key, and never cut an escape (`\\"`, `\\\\`) in half.
    inner = inner[: 255 - len(suffix)]
    trailing_backslashes = len(inner) - len(inner.rstrip("\\"))
    if quoted and trailing_backslashes % 2 == 1:
        inner = inner[:-1]
    key = inner + suffix
    case.headers = {**case.headers, "Idempotency-Key": f'"{key}"' if quoted else key}


# Letters and symbols the name rule refuses all the same: the Hangul fillers (default-ignorable)
# and the braille blank (draws nothing).
_INVISIBLE_LETTERS = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"}


def _visible_or_space(ch):
    category = unicodedata.category(ch)
    return category == "Zs" or (category[0] in "LNPS" and ch not in _INVISIBLE_LETTERS)


# The operations whose body's `name` follows the rule for human-entered names.
_NAMED = {
    ("POST", "/pets"),
    ("PATCH", "/pets/{petId}"),
    ("POST", "/categories"),
    ("PATCH", "/categories/{categoryId}"),
}


def _by_the_name_rule(name):
    """`name` with the characters the name rule refuses replaced, and not blank."""
    name = "".join(ch if _visible_or_space(ch) else "x" for ch in name)
    if name and all(unicodedata.category(ch) == "Zs" for ch in name):
        name = "x" + name[1:]
    return name


def _name_the_rule_accepts(case):
    """A valid request's `name` (or listPets' `name` search) by the name rule."""
    if not _generated_as_valid(case):
        return
    if case.method.upper() == "GET" and case.path == "/pets":
        if case.query and isinstance(case.query.get("name"), str):
            case.query = {**case.query, "name": _by_the_name_rule(case.query["name"])}
        return
    if (case.method.upper(), case.path) not in _NAMED:
        return
    if not isinstance(case.body, dict) or not isinstance(case.body.get("name"), str):
        return
    case.body = {**case.body, "name": _by_the_name_rule(case.body["name"])}


def _tag_the_rule_accepts(tag):
    """`tag` by the name rule, without commas, at most 32 characters once normalised."""
    tag = " ".join(_by_the_name_rule(tag.replace(",", "x")).split())[:32].strip()
    return tag or "x"


def _text_the_rule_accepts(text):
    """A description by the name rule, line breaks kept."""
    lines = [_by_the_name_rule(line) for line in text.replace("\r\n", "\n").split("\n")]
    text = "\n".join(lines)[:2000]
    return text if text.strip() else "x"


def _price_the_rule_accepts(price):
    amount = price.get("amount") if isinstance(price, dict) else None
    if not isinstance(amount, str) or not re.fullmatch(r"(0|[1-9][0-9]{0,8})(\.[0-9]{1,3})?", amount):
        return price
    whole, _, decimals = amount.partition(".")
    return {"amount": whole + ("." + decimals[:2] if decimals else ""), "currency": "EUR"}


_DETAILED = {("POST", "/pets"), ("PATCH", "/pets/{petId}")}


def _details_the_rules_accept(case):
    """A valid request's catalogue details (and listPets' `tag` search) by their rules."""
    if not _generated_as_valid(case):
        return
    if case.method.upper() == "GET" and case.path == "/pets":
        if case.query and isinstance(case.query.get("tag"), str):
            case.query = {**case.query, "tag": _tag_the_rule_accepts(case.query["tag"])}
        return
    if (case.method.upper(), case.path) not in _DETAILED or not isinstance(case.body, dict):
        return
    body = dict(case.body)
    if isinstance(body.get("tags"), list):
        body["tags"] = [_tag_the_rule_accepts(tag) if isinstance(tag, str) else tag for tag in body["tags"]]
    if isinstance(body.get("photoUrls"), list):
        body["photoUrls"] = [f"https://example.com/photo-{n}.jpg" for n in range(len(body["photoUrls"]))]
    if isinstance(body.get("description"), str):
        body["description"] = _text_the_rule_accepts(body["description"])
    if isinstance(body.get("price"), dict):
        body["price"] = _price_the_rule_accepts(body["price"])
    case.body = body


def _documented_pattern(case, header):
    """The `pattern` the operation documents for this header, or None."""
    for parameter in case.operation.definition.raw.get("parameters", []):
        if parameter.get("in") == "header" and parameter.get("name") == header:
            return parameter.get("schema", {}).get("pattern")
    return None


def _if_match_the_pattern_allows(case):
    """A valid request's `If-Match` that the documented pattern refuses sent as `*`."""
    if not case.headers or "If-Match" not in case.headers or not _generated_as_valid(case):
        return
    pattern = _documented_pattern(case, "If-Match")
    if pattern is not None and not re.search(pattern, str(case.headers["If-Match"])):
        case.headers = {**case.headers, "If-Match": "*"}


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    _integers_as_digits(case)
    _idempotency_key_of_its_own(case)
    _name_the_rule_accepts(case)
    _details_the_rules_accept(case)
    _if_match_the_pattern_allows(case)
    if case.method.upper() == "GET" and case.path == "/pets":
        _issued_cursor_for_valid_list(case)
    elif case.method.upper() == "GET" and case.path == "/store/orders":
        _issued_cursor_for_valid_order_list(case)
    elif case.method.upper() == "GET" and case.path == "/categories":
        _issued_cursor_for_valid_category_list(case)
    elif case.method.upper() == "GET" and case.path == "/events":
        _issued_cursor_for_valid_event_list(case)
    elif case.method.upper() == "GET" and case.path == "/webhook-endpoints":
        _issued_cursor_for_valid_endpoint_list(case)
    elif case.method.upper() == "GET" and case.path == "/webhook-endpoints/{endpointId}/deliveries":
        _issued_cursor_for_valid_delivery_list(case)
    _webhook_url_the_server_accepts(case)


# The name tests/contract/run.sh maps to a private address (`name=address`).
WEBHOOK_HOST = os.environ["PETSTORE_WEBHOOK_HOSTS"].split("=", 1)[0]
_WEBHOOK_BODIES = {("POST", "/webhook-endpoints"), ("PATCH", "/webhook-endpoints/{endpointId}")}
_urls_sent = iter(range(1, 1 << 62))


def _webhook_url_the_server_accepts(case):
    """A valid create's or patch's `url` on the contract's webhook host."""
    if (case.method.upper(), case.path) not in _WEBHOOK_BODIES or not _generated_as_valid(case):
        return
    if not isinstance(case.body, dict) or not isinstance(case.body.get("url"), str):
        return
    with _lock:
        number = next(_urls_sent)
    case.body = {**case.body, "url": f"https://{WEBHOOK_HOST}/contract/{number}"}
    if case.method.upper() == "POST":
        _room_for_an_endpoint()


# The most endpoints the store keeps (createWebhookEndpoint's description): beyond, 409.
MAX_ENDPOINTS = 50


def _room_for_an_endpoint():
    """The oldest endpoints deleted when the store is full, so that valid creates keep creating
    (and their answers keep being checked) instead of all meeting the bound, which has its own
    tests (crates/petstore-persistence/tests/webhooks.rs). A case that still uses a deleted endpoint gets a 404."""
    with _lock:
        request = urllib.request.Request(
            f"{BASE_URL}/webhook-endpoints?limit=100", headers={"Authorization": f"Bearer {API_KEY}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            endpoints = json.load(response)
        for endpoint in endpoints[: max(0, len(endpoints) - MAX_ENDPOINTS + 10)]:
            try:
                _request("DELETE", f"/webhook-endpoints/{endpoint['id']}")
            except urllib.error.HTTPError as error:
                if error.code != 404:
                    raise


def _first_cursor(path, query):
    """The cursor of the `rel="next"` link the server answers `path?query` with, or None (no
    next page, or a request the server refuses)."""
    try:
        link = _request("GET", f"{path}?{urllib.parse.urlencode(query)}")
    except urllib.error.HTTPError:
        return None
    match = re.search(r"[?&]cursor=([^&>]+)", link)
    return urllib.request.unquote(match.group(1)) if match else None


_webhook_cursors = {}


def _issued_webhook_cursor(path, query):
    """A cursor the server issued for this listing, kept once there is one."""
    key = (path, tuple(sorted(query.items())))
    with _lock:
        if key not in _webhook_cursors:
            cursor = _first_cursor(path, {"limit": 1, **query})
            if cursor is None:
                return None
            _webhook_cursors[key] = cursor
        return _webhook_cursors[key]


def _with_issued_cursor(case, cursor):
    query = {name: value for name, value in case.query.items() if name != "cursor"}
    if cursor is not None:
        query["cursor"] = cursor
    case.query = query


def _issued_cursor_for_valid_endpoint_list(case):
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    _with_issued_cursor(case, _issued_webhook_cursor("/webhook-endpoints", {}))


def _issued_cursor_for_valid_delivery_list(case):
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    endpoint = (case.path_parameters or {}).get("endpointId")
    status = case.query.get("status")
    filters = {"status": status} if isinstance(status, str) else {}
    path = f"/webhook-endpoints/{endpoint}/deliveries"
    _with_issued_cursor(case, _issued_webhook_cursor(path, filters))


_event_cursors = {}


def _issued_event_cursor(types):
    """The cursor the server issued, to the contract's key, for this `types` filter."""
    with _lock:
        if types not in _event_cursors:
            query = "limit=1" + (f"&types={urllib.parse.quote(types)}" if types else "")
            match = re.search(r"[?&]cursor=([^&>]+)", _request("GET", f"/events?{query}"))
            assert match, "every page of the feed links on"
            _event_cursors[types] = urllib.request.unquote(match.group(1))
        return _event_cursors[types]


def _issued_cursor_for_valid_event_list(case):
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    query = dict(case.query)
    query["cursor"] = _issued_event_cursor(query.get("types"))
    case.query = query


_category_cursor = []


def _issued_category_cursor():
    """A cursor the server issued for listCategories, or None while it has one page."""
    with _lock:
        if not _category_cursor:
            match = re.search(r"[?&]cursor=([^&>]+)", _request("GET", "/categories?limit=1"))
            if match is None:
                return None
            _category_cursor.append(urllib.request.unquote(match.group(1)))
        return _category_cursor[0]


def _issued_cursor_for_valid_category_list(case):
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    cursor = _issued_category_cursor()
    query = {name: value for name, value in case.query.items() if name != "cursor"}
    if cursor is not None:
        query["cursor"] = cursor
    case.query = query


def _issued_order_cursor(status, pet_id):
    """A cursor the server issued for these listOrders filters, or None when no next page
    exists for them (fewer than two matching orders)."""
    key = (status, pet_id)
    with _lock:
        if key not in _order_cursors:
            query = "limit=1" + (f"&status={status}" if status else "")
            query += f"&petId={pet_id}" if pet_id is not None else ""
            link = _request("GET", f"/store/orders?{query}")
            match = re.search(r"[?&]cursor=([^&>]+)", link)
            _order_cursors[key] = urllib.request.unquote(match.group(1)) if match else None
        return _order_cursors[key]


def _issued_cursor_for_valid_order_list(case):
    """listOrders' cursor is signed like listPets' and bound to its filters: a valid request
    gets one the server issued for its own filters, or none when no such page exists."""
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    cursor = _issued_order_cursor(case.query.get("status"), case.query.get("petId"))
    query = {name: value for name, value in case.query.items() if name != "cursor"}
    if cursor is not None:
        query["cursor"] = cursor
    case.query = query


_search_cursors = {}
SEARCH_FILTERS = ("categoryId", "tag", "name")


def _issued_search_cursor(status, search, ids):
    """A cursor the server issued for listPets with this `status`, these search filters (which
    cursors are bound to as well) and these `id`s (a lookup by id is in id order, a search by
    name alone in name order: each takes the cursors of its own order), or None when they match
    fewer than two pets."""
    key = (status, tuple(sorted(search.items())), tuple(ids))
    with _lock:
        if key not in _search_cursors:
            query = {"limit": 1, **({"status": status} if status else {}), **search}
            if ids:
                query["id"] = list(ids)
            try:
                link = _request("GET", "/pets?" + urllib.parse.urlencode(query, doseq=True))
            except urllib.error.HTTPError:
                # Filters the service refuses: no page, so no cursor (the request gets a 400).
                link = ""
            match = re.search(r"[?&]cursor=([^&>]+)", link)
            _search_cursors[key] = urllib.request.unquote(match.group(1)) if match else None
        return _search_cursors[key]


def _issued_cursor_for_valid_list(case):
    if not case.query or "cursor" not in case.query or not _generated_as_valid(case):
        return
    status = case.query.get("status")
    if status is not None and status not in STATUSES:
        return
    search = {name: case.query[name] for name in SEARCH_FILTERS if name in case.query}
    if search:
        ids = case.query.get("id", [])
        ids = ids if isinstance(ids, list) else [ids]
        cursor = _issued_search_cursor(status, search, ids)
        query = {name: value for name, value in case.query.items() if name != "cursor"}
        if cursor is not None:
            query["cursor"] = cursor
        case.query = query
        return
    # Assigning a new dict (not editing in place) lets Schemathesis re-check the case's validity.
    case.query = {**case.query, "cursor": _issued_cursor(status)}
