"""Our webhooks as a receiver written in another language sees them: every delivery verified by
the official Standard Webhooks library for Python (`standardwebhooks`, pinned in
tests/webhooks/requirements.txt), against a live server that may deliver to loopback over plain
http (tests/webhooks/run.sh starts it):

    python receiver.py http://127.0.0.1:PORT <store key>

A receiver (stdlib `http.server` on 127.0.0.1, port 0) answers 204 to a request that
`Webhook(secret).verify(body, headers)` accepts for a secret it holds, and 401 to any other,
recording each. The walk-through registers an endpoint for every event type, makes changes
(createPet, a pet renamed, createCategory, placeOrder), waits for them, rotates the secret,
makes more, and pings. It then waits, with a deadline, until every event of listEvents (paged by
`Link`) written since the registration and the ping's event arrived, and fails on any 401, a
missing id, an id whose bodies differ, a body that is not the feed's item for that id, or a
change after the rotation not signed with the new secret and the previous one both. Last, a
delivery replayed as it came must be accepted and the same one with one byte of its body changed
refused: the check that the receiver can refuse at all. One summary line on success; what went
wrong, and exit 1, otherwise.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from typing import Any
from urllib.parse import urljoin

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

# Deliveries are asynchronous: the worker looks every 200 ms and retries within 3 s.
DEADLINE_SECONDS = 30.0
POLL_SECONDS = 0.1

# Requests to the server under test and to the receiver go to loopback, never through a proxy
# configured for reaching package registries.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Mismatch(Exception):
    pass


def ensure(condition: bool, message: str) -> None:
    if not condition:
        raise Mismatch(message)


@dataclass
class Received:
    """One request as it reached the receiver, and which of the secrets then known verified it."""

    webhook_id: str | None
    headers: dict[str, str]
    body: bytes
    verified_by: list[str]


@dataclass
class Inbox:
    """What the receiver holds: the secrets it verifies with, and every request it answered."""

    secrets: list[str] = field(default_factory=list)
    accepted: list[Received] = field(default_factory=list)
    refused: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def trust(self, secret: str) -> None:
        with self.lock:
            self.secrets.append(secret)

    def snapshot(self) -> tuple[list[Received], list[Received]]:
        with self.lock:
            return list(self.accepted), list(self.refused)


def receiver(inbox: Inbox) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = self.headers.get("Content-Length")
            body = self.rfile.read(int(length)) if length is not None else b""
            headers = dict(self.headers.items())
            with inbox.lock:
                secrets = list(inbox.secrets)
            verified_by = []
            for secret in secrets:
                try:
                    Webhook(secret).verify(body, headers)
                except WebhookVerificationError:
                    continue
                verified_by.append(secret)
            received = Received(self.headers.get("webhook-id"), headers, body, verified_by)
            with inbox.lock:
                (inbox.accepted if verified_by else inbox.refused).append(received)
            self.send_response(204 if verified_by else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Api:
    def __init__(self, origin: str, key: str) -> None:
        self.origin, self.key = origin, key

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> tuple[Any, Any]:
        """The JSON answer and the headers of a call that must answer `expect`."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(urljoin(self.origin, path), data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with OPENER.open(request, timeout=10) as response:
                status, headers, text = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, text = error.code, error.headers, error.read()
        ensure(status == expect, f"{method} {path}: expected {expect}, got {status}: {text!r}")
        return (json.loads(text) if text else None), headers

    def events(self) -> list[dict[str, Any]]:
        """Every event of listEvents, by `Link: rel="next"` until a page is empty."""
        events: list[dict[str, Any]] = []
        path = "/v1/events?limit=100"
        for _ in range(1000):
            page, headers = self.call("GET", path)
            if not page:
                return events
            events.extend(page)
            path = next_link(headers.get("Link"))
            ensure(path is not None, f"listEvents: no rel=\"next\" in {headers.get('Link')!r}")
        raise Mismatch("listEvents: still a next page after 1000")


def next_link(value: str | None) -> str | None:
    """The target of the `rel="next"` link of a `Link` header value (RFC 8288)."""
    for link in (value or "").split(","):
        target, _, params = link.strip().partition(";")
        if any(p.strip() in ('rel="next"', "rel=next") for p in params.split(";")):
            return target.strip().removeprefix("<").removesuffix(">")
    return None


def wait_for(inbox: Inbox, ids: set[str], what: str) -> None:
    """Until every id in `ids` was accepted, or a request was refused; fails at the deadline."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        accepted, refused = inbox.snapshot()
        if refused:
            raise Mismatch(f"{what}: refused {describe(refused[0])}")
        missing = ids - {r.webhook_id for r in accepted}
        if not missing:
            return
        ensure(
            time.monotonic() < deadline,
            f"{what}: {sorted(missing)} not delivered within {DEADLINE_SECONDS:.0f} s",
        )
        time.sleep(POLL_SECONDS)


def describe(received: Received) -> str:
    return f"a request with headers {received.headers} and body {received.body!r}"


def changes(api: Api, label: str) -> None:
    """createPet, a rename of it, createCategory, and an order for a second pet."""
    pet, _ = api.call("POST", "/v1/pets", {"name": f"Rex {label}", "categoryId": 1}, 201)
    api.call("PATCH", f"/v1/pets/{pet['id']}", {"name": f"Max {label}"})
    api.call("POST", "/v1/categories", {"name": f"Hooks {label}"}, 201)
    ordered, _ = api.call("POST", "/v1/pets", {"name": f"Tom {label}", "categoryId": 2}, 201)
    api.call("POST", "/v1/store/orders", {"petId": ordered["id"]}, 201)


def post(url: str, headers: dict[str, str], body: bytes) -> int:
    """The status the receiver answers to a delivery sent by hand."""
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with OPENER.open(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def walk(api: Api, inbox: Inbox, url: str) -> str:
    before = {event["id"] for event in api.events()}
    endpoint, _ = api.call("POST", "/v1/webhook-endpoints", {"url": url}, 201)
    old = endpoint["secret"]
    inbox.trust(old)
    hooks = f"/v1/webhook-endpoints/{endpoint['id']}"

    changes(api, "before")
    first = {event["id"] for event in api.events() if event["id"] not in before}
    ensure(len(first) >= 5, f"listEvents: {len(first)} events of the 5 changes before")
    wait_for(inbox, first, "the changes before the rotation")

    rotated, _ = api.call("POST", f"{hooks}/rotate-secret")
    new = rotated["secret"]
    ensure(new != old, "rotate-secret answered the secret it replaced")
    inbox.trust(new)
    changes(api, "after")
    ping, _ = api.call("POST", f"{hooks}/ping", expect=202)

    feed = {event["id"]: event for event in api.events() if event["id"] not in before}
    second = set(feed) - first
    ensure(len(second) >= 5, f"listEvents: {len(second)} events of the 5 changes after")
    wait_for(inbox, set(feed) | {ping["eventId"]}, "every event and the ping")

    accepted, refused = inbox.snapshot()
    if refused:
        raise Mismatch(f"refused {describe(refused[0])}")
    bodies: dict[str, bytes] = {}
    for received in accepted:
        ensure(received.webhook_id is not None, f"no webhook-id: {describe(received)}")
        first_body = bodies.setdefault(received.webhook_id, received.body)
        ensure(
            first_body == received.body,
            f"{received.webhook_id} came twice with different bodies: "
            f"{first_body!r} and {received.body!r}",
        )
        posted = json.loads(received.body)
        ensure(posted["id"] == received.webhook_id, f"webhook-id is not the body's id: {posted}")
        if received.webhook_id in second or received.webhook_id == ping["eventId"]:
            # Within the rotation's window both secrets sign.
            ensure(
                received.verified_by == [old, new],
                f"after the rotation, {received.webhook_id} verified with "
                f"{len(received.verified_by)} of the 2 secrets: {describe(received)}",
            )
    unexpected = set(bodies) - set(feed) - {ping["eventId"]}
    ensure(not unexpected, f"delivered, but not in listEvents since the registration: {unexpected}")
    for event_id, event in feed.items():
        ensure(
            json.loads(bodies[event_id]) == event,
            f"{event_id}: the body {bodies[event_id]!r} is not listEvents' item {event}",
        )
    pinged = json.loads(bodies[ping["eventId"]])
    ensure(
        pinged["type"] == "webhook.ping" and pinged["data"] == {"endpointId": endpoint["id"]},
        f"the ping's body: {pinged}",
    )

    # A delivery sent again as it came is accepted (the library allows 5 minutes of skew); with
    # a space added to its body (the same JSON, other bytes) and the same headers, refused.
    replay = next(r for r in accepted if r.webhook_id == ping["eventId"])
    headers = {
        name: value
        for name, value in replay.headers.items()
        if name.lower().startswith("webhook-") or name.lower() == "content-type"
    }
    status = post(url, headers, replay.body)
    ensure(status == 204, f"the ping sent again as it came: {status}, expected 204")
    tampered = replay.body.replace(b'"endpointId":', b'"endpointId": ', 1)
    ensure(tampered != replay.body, f"nothing to tamper with in {replay.body!r}")
    status = post(url, headers, tampered)
    ensure(status == 401, f"the ping with its body changed: {status}, expected 401")

    return (
        f"{len(feed)} events and 1 ping, {len(accepted)} deliveries, each verified by "
        f"standardwebhooks {version('standardwebhooks')} (after the rotation with the new secret "
        f"and the previous one); a changed body refused"
    )


def main() -> int:
    origin, key = sys.argv[1:]
    inbox = Inbox()
    server = receiver(inbox)
    url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    start = time.monotonic()
    try:
        summary = walk(Api(origin, key), inbox, url)
    except Mismatch as mismatch:
        print(f"webhooks: FAILED: {mismatch}", file=sys.stderr)
        return 1
    finally:
        server.shutdown()
    print(f"webhooks: {summary} in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
