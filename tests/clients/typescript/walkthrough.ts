/**
 * The README's walk-through, run with a TypeScript client against a live server: types that
 * openapi-typescript generates from the committed docs/openapi.json, and openapi-fetch, the
 * runtime client that takes them (tests/clients/typescript/build.sh generates and compiles):
 *
 *     PETSTORE_URL=http://127.0.0.1:PORT/v1 PETSTORE_KEY=<write key> \
 *         node target/clients/typescript/dist/walkthrough.js
 *
 * Every call goes through the typed `client.GET` / `client.POST` of openapi-fetch: a success must
 * be the documented status and have the documented shape, and every error must reach this code
 * as openapi-fetch's `error`, typed as the generated `Error` (checked by tsc: an error answer that
 * the document types otherwise does not compile) and shaped like it (checked here), with the
 * expected `code` and `status`. Any mismatch prints what was expected and what came, and exits 1.
 * tests/clients/run.sh builds and runs it; one summary line on success.
 */

import createClient from "openapi-fetch";
import type { Client } from "openapi-fetch";

import type { components, operations, paths } from "./petstore-api.js";

type Pet = components["schemas"]["Pet"];
type PetStatus = components["schemas"]["PetStatus"];
type Order = components["schemas"]["Order"];
type OrderStatus = components["schemas"]["OrderStatus"];
type ApiError = components["schemas"]["Error"];
type ListPetsQuery = NonNullable<operations["listPets"]["parameters"]["query"]>;
type Category = components["schemas"]["Category"];
type Event = components["schemas"]["Event"];
type EventType = Event["type"];
type ListEventsQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>;
type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
type WebhookEndpointWithSecret = components["schemas"]["WebhookEndpointWithSecret"];
type Api = Client<paths>;

const PAGED_PETS = 45;
const PAGE_LIMIT = 10;
/** Events a page of listEvents holds at most in the walk-through's reads. */
const EVENT_PAGE_LIMIT = 20;

class Mismatch extends Error {}

function ensure(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Mismatch(message);
  }
}

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

// Run-time checks of the documented shapes (the generated types exist at compile time only),
// keyed by the generated types: a property or enum value the document drops or renames is a
// compile error here; one it adds is not (nor is it for a client).
type Check = (value: unknown) => boolean;
const isInteger: Check = (value) => Number.isSafeInteger(value);
const isString: Check = (value) => typeof value === "string";
const isBoolean: Check = (value) => typeof value === "boolean";
const PET_STATUSES: { [S in PetStatus]?: true } = { available: true, pending: true, sold: true };
const ORDER_STATUSES: { [S in OrderStatus]?: true } = {
  placed: true,
  approved: true,
  delivered: true,
  cancelled: true,
};
const oneOf =
  (values: { [value: string]: true | undefined }): Check =>
  (value) =>
    typeof value === "string" && Object.hasOwn(values, value);

function shaped<T>(checks: { [K in keyof T]?: Check }): (value: unknown) => value is T {
  return (value: unknown): value is T =>
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries<Check | undefined>(checks).every(
      ([name, check]) => check === undefined || check((value as Record<string, unknown>)[name]),
    );
}

const isPet = shaped<Pet>({
  id: isInteger,
  name: isString,
  categoryId: isInteger,
  status: oneOf(PET_STATUSES),
});
const isPets = (value: unknown): value is Pet[] => Array.isArray(value) && value.every(isPet);
const isOrder = shaped<Order>({
  id: isInteger,
  petId: isInteger,
  quantity: isInteger,
  status: oneOf(ORDER_STATUSES),
  complete: isBoolean,
  shipDate: (value) => value === undefined || value === null || isString(value),
});
const isApiError = shaped<ApiError>({ code: isString, message: isString, status: isInteger });
const isCategory = shaped<Category>({ id: isInteger, name: isString });
const isStrings: Check = (value) => Array.isArray(value) && value.every(isString);
const isWebhookEndpoint = shaped<WebhookEndpoint>({
  id: isInteger,
  url: isString,
  eventTypes: isStrings,
  enabled: isBoolean,
});
const isWebhookEndpoints = (value: unknown): value is WebhookEndpoint[] =>
  Array.isArray(value) && value.every(isWebhookEndpoint);
const isWebhookEndpointWithSecret = shaped<WebhookEndpointWithSecret>({
  id: isInteger,
  url: isString,
  eventTypes: isStrings,
  enabled: isBoolean,
  secret: isString,
});

/** The `data` of an event of type `T`: the resource of the member of the `Event` union whose
 * `type` admits `T`. */
type DataOf<T extends EventType, E = Event> = E extends { type: infer U; data: infer D }
  ? T extends U
    ? D
    : never
  : never;
// Each event type with the check of its `data`, the schema the document's discriminator maps it
// to: tsc checks each against the generated union, so a type given another resource's check does
// not compile.
const EVENT_DATA: { [T in EventType]?: (data: unknown) => data is DataOf<T> } = {
  "pet.created": isPet,
  "pet.updated": isPet,
  "pet.removed": isPet,
  "order.placed": isOrder,
  "order.approved": isOrder,
  "order.delivered": isOrder,
  "order.cancelled": isOrder,
  "category.created": isCategory,
  "category.updated": isCategory,
  "category.removed": isCategory,
};
const isEventType = (value: unknown): value is EventType =>
  typeof value === "string" && Object.hasOwn(EVENT_DATA, value);
const isEventShaped = shaped<Event>({
  id: (value) => typeof value === "string" && /^evt_[0-9a-f]{32}$/.test(value),
  type: isEventType,
  timestamp: (value) => typeof value === "string" && !Number.isNaN(Date.parse(value)),
  payloadVersion: (value) => value === 1,
});
const isEvent = (value: unknown): value is Event =>
  isEventShaped(value) && (EVENT_DATA[value.type]?.(value.data) ?? false);
const isEvents = (value: unknown): value is Event[] => Array.isArray(value) && value.every(isEvent);

/** What openapi-fetch answers: `data` on a success, `error` (the generated `Error`) on an error. */
interface Answer<T> {
  data?: T;
  error?: ApiError;
  response: Response;
}

/** A success with this status, shaped as the documented type. */
function expect<T>(what: string, answer: Answer<T>, status: number, is: (v: unknown) => v is T): T {
  const { data, error, response } = answer;
  ensure(
    response.status === status,
    `${what}: expected ${status}, got ${response.status}: ${show(data ?? error)}`,
  );
  ensure(is(data), `${what}: expected the documented type, got ${show(data)}`);
  return data;
}

/** An error that reached the caller typed: openapi-fetch's `error`, the generated `Error` with
 * this code and status. */
function expectError(
  what: string,
  answer: Answer<unknown>,
  status: number,
  code: string,
): ApiError {
  const { data, error, response } = answer;
  ensure(
    data === undefined && isApiError(error),
    `${what}: expected ${status} \`${code}\` as the generated Error, got HTTP ${response.status} ` +
      `with ${data === undefined ? `error ${show(error)}` : `data ${show(data)}`}`,
  );
  ensure(
    response.status === status && error.code === code && error.status === status,
    `${what}: expected ${status} \`${code}\`, got HTTP ${response.status} with ${show(error)}`,
  );
  return error;
}

/** A client whose every request carries `Authorization: Bearer <key>` (none without a key),
 * each request given 15 s. */
function client(base: string, key?: string): Api {
  return createClient<paths>({
    baseUrl: base,
    headers: key === undefined ? {} : { Authorization: `Bearer ${key}` },
    fetch: (request: Request) => fetch(request, { signal: AbortSignal.timeout(15_000) }),
  });
}

// docs/generated-clients.md shows the lines between the markers; tests/clients/run.sh checks
// that it shows them as they are here.
// begin: every_pet
/** The target of the `rel="next"` link of a `Link` header value (RFC 8288). */
function nextLink(value: string | null): string | undefined {
  for (const link of (value ?? "").split(",")) {
    const [target = "", ...params] = link.trim().split(";");
    if (params.some((param) => ['rel="next"', "rel=next"].includes(param.trim()))) {
      return target.trim().replace(/^</, "").replace(/>$/, "");
    }
  }
  return undefined;
}

/** Every pet listPets answers for `filters`, page after page, by `Link: rel="next"`. */
async function* everyPet(
  client: Client<paths>,
  filters: Omit<ListPetsQuery, "cursor"> = {},
): AsyncGenerator<Pet> {
  let cursor: string | undefined;
  while (true) {
    const { data, error, response } = await client.GET("/pets", {
      params: { query: { ...filters, cursor } },
    });
    if (data === undefined) {
      throw new Error(`listPets: ${response.status} ${JSON.stringify(error)}`);
    }
    yield* data;
    const target = nextLink(response.headers.get("link"));
    if (target === undefined) {
      return;
    }
    const next = new URL(target, response.url).searchParams.get("cursor");
    if (next === null) {
      throw new Error(`listPets: a next link without a cursor: ${target}`);
    }
    cursor = next;
  }
}
// end: every_pet

/** Follows listPets' `Link: rel="next"` from the first page until a page has none; returns the
 * ids seen, in order, and the number of pages. */
async function pageThrough(api: Api, base: string, ids: number[]): Promise<[number[], number]> {
  const seen: number[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= PAGED_PETS + 1; page++) {
    const answer = await api.GET("/pets", {
      params: { query: { id: ids, limit: PAGE_LIMIT, cursor } },
    });
    const pets = expect(`listPets page ${page}`, answer, 200, isPets);
    ensure(pets.length <= PAGE_LIMIT, `listPets page ${page} holds ${pets.length} pets`);
    seen.push(...pets.map((pet) => pet.id));
    const link = answer.response.headers.get("link");
    if (link === null) {
      return [seen, page];
    }
    const target = nextLink(link);
    ensure(target !== undefined, `listPets page ${page}: no rel="next" in Link ${show(link)}`);
    const url = new URL(target, base);
    ensure(url.pathname === "/v1/pets", `listPets page ${page}: Link points at ${target}`);
    ensure(
      show(url.searchParams.getAll("id").map(Number)) === show(ids),
      `listPets page ${page}: the next link lost the id filter: ${target}`,
    );
    const cursors = url.searchParams.getAll("cursor");
    ensure(cursors.length === 1, `listPets page ${page}: no cursor in ${target}`);
    cursor = cursors[0];
  }
  throw new Mismatch(`listPets: still a next link after ${PAGED_PETS + 1} pages`);
}

async function expectPetStatus(api: Api, petId: number, status: PetStatus, when: string) {
  // listPets by id, getPet's documented replacement.
  const pets = expect(
    `listPets?id=${petId} ${when}`,
    await api.GET("/pets", { params: { query: { id: [petId] } } }),
    200,
    isPets,
  );
  ensure(
    pets.length === 1 && pets[0]?.id === petId && pets[0].status === status,
    `listPets?id=${petId} ${when} answered ${show(pets)}, expected the pet ${status}`,
  );
}

function responseTag(what: string, response: Response): string {
  const tag = response.headers.get("etag");
  ensure(tag !== null, `${what} answered without an ETag`);
  return tag;
}

/** The staff's changes to a pet whose `ETag` (from createPet) is `tag`: updatePet with
 * `If-Match` renames it and answers a new tag; the old tag is then stale, so a second change
 * with it is 412 and changes nothing; deletePet with the new tag is 204, and a second deletePet
 * 404. */
async function changeAndRemove(api: Api, petId: number, tag: string): Promise<string> {
  const path = { petId };
  const renamedAnswer = await api.PATCH("/pets/{petId}", {
    params: { path, header: { "If-Match": tag } },
    body: { name: "Tommy" },
  });
  const renamed = expect("updatePet with If-Match", renamedAnswer, 200, isPet);
  ensure(
    renamed.id === petId && renamed.name === "Tommy",
    `updatePet answered ${show(renamed)}`,
  );
  const newTag = responseTag("updatePet", renamedAnswer.response);
  ensure(newTag !== tag, `updatePet changed the pet but kept its ETag ${tag}`);

  expectError(
    "updatePet with the stale If-Match",
    await api.PATCH("/pets/{petId}", {
      params: { path, header: { "If-Match": tag } },
      body: { status: "pending" },
    }),
    412,
    "precondition_failed",
  );
  const kept = expect(
    "listPets after the refused change",
    await api.GET("/pets", { params: { query: { id: [petId] } } }),
    200,
    isPets,
  );
  ensure(
    kept.length === 1 && kept[0]?.name === "Tommy" && kept[0].status === "available",
    `the refused change changed the pet: ${show(kept)}`,
  );

  const removed = await api.DELETE("/pets/{petId}", {
    params: { path, header: { "If-Match": newTag } },
  });
  ensure(
    removed.response.status === 204 && removed.error === undefined,
    `deletePet with If-Match: expected 204, got ${removed.response.status}: ` +
      show(removed.error),
  );
  expectError(
    "deletePet again",
    await api.DELETE("/pets/{petId}", { params: { path } }),
    404,
    "not_found",
  );
  expectError(
    "getPet of the removed pet",
    await api.GET("/pets/{petId}", { params: { path } }),
    404,
    "not_found",
  );
  return `pet ${petId} renamed with If-Match, 412 with the stale tag, deleted (204, then 404)`;
}

/** One page of listEvents: its events, the cursor of its `Link: rel="next"` (where the next read
 * starts; every page has one) and `X-More-Events` (whether more events follow already). */
interface EventPage {
  events: Event[];
  next: string;
  more: boolean;
}

/** One listEvents read: 200, with a `Link: rel="next"` back to the feed, carrying the same
 * `types`, and `X-More-Events`. */
/** createWebhookEndpoint answers the endpoint with its signing secret; listWebhookEndpoints lists
 * it without the secret; deleteWebhookEndpoint is 204, then 404. Added disabled, so that nothing
 * is ever posted to it. */
async function webhookEndpoint(api: Api): Promise<string> {
  const url = "https://hooks.example.com/walk-through";
  const createdAnswer = await api.POST("/webhook-endpoints", {
    body: { url, eventTypes: ["pet.*"], enabled: false },
  });
  const created = expect(
    "createWebhookEndpoint",
    createdAnswer,
    201,
    isWebhookEndpointWithSecret,
  );
  ensure(
    created.url === url &&
      show(created.eventTypes) === show(["pet.created", "pet.updated", "pet.removed"]) &&
      !created.enabled &&
      created.secret?.startsWith("whsec_") === true,
    `createWebhookEndpoint answered ${show(created)}`,
  );
  const location = createdAnswer.response.headers.get("location");
  ensure(
    location === `/v1/webhook-endpoints/${created.id}`,
    `createWebhookEndpoint: Location ${show(location)}`,
  );
  const listed = expect(
    "listWebhookEndpoints",
    await api.GET("/webhook-endpoints"),
    200,
    isWebhookEndpoints,
  );
  ensure(
    listed.length === 1 &&
      listed[0]?.id === created.id &&
      listed[0].url === url &&
      !Object.hasOwn(listed[0], "secret"),
    `listWebhookEndpoints answered ${show(listed)}`,
  );
  const path = { endpointId: created.id };
  const removed = await api.DELETE("/webhook-endpoints/{endpointId}", { params: { path } });
  ensure(
    removed.response.status === 204 && removed.error === undefined,
    `deleteWebhookEndpoint: expected 204, got ${removed.response.status}: ${show(removed.error)}`,
  );
  expectError(
    "deleteWebhookEndpoint again",
    await api.DELETE("/webhook-endpoints/{endpointId}", { params: { path } }),
    404,
    "not_found",
  );
  return `webhook endpoint ${created.id} created with its secret, listed, deleted (204, then 404)`;
}

async function readEvents(
  api: Api,
  base: string,
  what: string,
  query: ListEventsQuery,
): Promise<EventPage> {
  const answer = await api.GET("/events", { params: { query } });
  const events = expect(what, answer, 200, isEvents);
  const more = answer.response.headers.get("x-more-events");
  ensure(more === "true" || more === "false", `${what}: X-More-Events ${show(more)}`);
  const link = answer.response.headers.get("link");
  const target = nextLink(link);
  ensure(target !== undefined, `${what}: no rel="next" in Link ${show(link)}`);
  const url = new URL(target, base);
  ensure(url.pathname === "/v1/events", `${what}: Link points at ${target}`);
  ensure(
    (url.searchParams.get("types") ?? undefined) === query.types,
    `${what}: the next link lost the types: ${target}`,
  );
  const cursors = url.searchParams.getAll("cursor");
  ensure(cursors.length === 1 && cursors[0] !== undefined, `${what}: no cursor in ${target}`);
  return { events, next: cursors[0], more: more === "true" };
}

/** What an event is about: its type and the id of its `data`. */
const subject = (event: Event): [EventType, number] => [event.type, event.data.id];

/** The feed after the walk-through's changes (`changesMade`, each a type and the id of the
 * resource changed): read page by page by `Link` until `X-More-Events` is `false`, every event
 * shaped as the member of the generated union its `type` names; the end's cursor gives nothing
 * more until one more change, then that change alone; `types=order.*` the order's events alone,
 * and its cursor sent without those types is a typed 400. */
async function readTheFeed(
  api: Api,
  base: string,
  changesMade: [EventType, number][],
  orderId: number,
): Promise<string> {
  const events: Event[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let end: string;
  while (true) {
    pages++;
    ensure(pages <= changesMade.length, `listEvents: still more events after ${pages} pages`);
    const page = await readEvents(api, base, `listEvents page ${pages}`, {
      limit: EVENT_PAGE_LIMIT,
      cursor,
    });
    ensure(
      page.events.length <= EVENT_PAGE_LIMIT,
      `listEvents page ${pages} holds ${page.events.length} events`,
    );
    events.push(...page.events);
    if (!page.more) {
      end = page.next;
      break;
    }
    cursor = page.next;
  }
  ensure(
    show(events.map(subject)) === show(changesMade),
    `listEvents by Link read (type, data.id) ${show(events.map(subject))}, ` +
      `expected ${show(changesMade)}`,
  );
  ensure(
    new Set(events.map((event) => event.id)).size === events.length,
    `listEvents: ids repeat: ${show(events)}`,
  );
  // Each event carries its resource as it was right after the change: `type` narrows `data`.
  const removed = events.flatMap((event) =>
    event.type === "pet.removed" ? [event.data.name] : [],
  );
  ensure(
    show(removed) === show(["Tommy"]),
    `pet.removed carries ${show(removed)}, expected the pet as it was when removed (Tommy)`,
  );
  const delivered = events.flatMap((event) =>
    event.type === "order.delivered" ? [event.data] : [],
  );
  ensure(
    delivered.length === 1 && delivered[0]?.status === "delivered" && delivered[0].complete,
    `order.delivered carries ${show(delivered)}`,
  );

  // The end's cursor: nothing since, until one more change.
  const nothing = await readEvents(api, base, "listEvents from the end", {
    limit: EVENT_PAGE_LIMIT,
    cursor: end,
  });
  ensure(
    nothing.events.length === 0 && !nothing.more,
    `listEvents from the end of the feed answered ${show(nothing.events)} ` +
      `(X-More-Events ${nothing.more})`,
  );
  const felix = expect(
    "createPet Felix",
    await api.POST("/pets", { body: { name: "Felix", categoryId: 1 } }),
    201,
    isPet,
  );
  const since = await readEvents(api, base, "listEvents from the end after createPet", {
    limit: EVENT_PAGE_LIMIT,
    cursor: end,
  });
  ensure(
    show(since.events.map(subject)) === show([["pet.created", felix.id]]),
    `listEvents from the end after createPet Felix (${felix.id}) answered ${show(since.events)}`,
  );

  // types=order.*: the order's events alone; the cursor of that read is for those types only.
  const orders = await readEvents(api, base, "listEvents?types=order.*", { types: "order.*" });
  const expected: [EventType, number][] = [
    ["order.placed", orderId],
    ["order.approved", orderId],
    ["order.delivered", orderId],
  ];
  ensure(
    show(orders.events.map(subject)) === show(expected) && !orders.more,
    `listEvents?types=order.* answered ${show(orders.events.map(subject))} ` +
      `(X-More-Events ${orders.more}), expected ${show(expected)}`,
  );
  expectError(
    "listEvents with the cursor of types=order.* without types",
    await api.GET("/events", { params: { query: { cursor: orders.next } } }),
    400,
    "invalid_parameter",
  );
  return (
    `listEvents ${events.length} events in ${pages} pages by Link in order, 1 more since the ` +
    `end, ${orders.events.length} by types=order.*`
  );
}

async function walkthrough(base: string, key: string): Promise<string> {
  const api = client(base, key);

  // createPet: 201, the typed pet and its Location.
  const createdRex = await api.POST("/pets", { body: { name: "Rex", categoryId: 3 } });
  const rex = expect("createPet Rex", createdRex, 201, isPet);
  ensure(
    rex.name === "Rex" && rex.categoryId === 3 && rex.status === "available",
    `createPet Rex answered ${show(rex)}`,
  );
  let location = createdRex.response.headers.get("location");
  ensure(location === `/v1/pets/${rex.id}`, `createPet Rex: Location ${show(location)}`);

  // createPet with an Idempotency-Key, sent twice as a client retrying would: the second answer
  // is the first again, marked as replayed, and only one pet is stored.
  const tom = {
    params: { header: { "Idempotency-Key": '"walk-through-tom-1"' } },
    body: { name: "Tom", categoryId: 2 },
  };
  const firstAnswer = await api.POST("/pets", tom);
  const first = expect("createPet Tom with Idempotency-Key", firstAnswer, 201, isPet);
  const retried = await api.POST("/pets", tom);
  const retry = expect("createPet Tom retried", retried, 201, isPet);
  const replayed = retried.response.headers.get("idempotent-replayed");
  ensure(
    replayed === "true" && retry.id === first.id,
    `the retry was not replayed: ${show(retry)} (Idempotent-Replayed ${show(replayed)}) after ` +
      show(first),
  );
  const tomTag = responseTag("createPet Tom", firstAnswer.response);

  // 45 more pets, then listPets by their ids, 10 a page, following `Link: rel="next"`.
  const created: number[] = [];
  for (let n = 1; n <= PAGED_PETS; n++) {
    const name = `Chien nº ${n} 🐕`;
    const pet = expect(
      `createPet ${name}`,
      await api.POST("/pets", { body: { name, categoryId: 1 + (n % 5) } }),
      201,
      isPet,
    );
    ensure(pet.name === name, `createPet ${name} answered ${show(pet)}`);
    created.push(pet.id);
  }
  const [seen, pages] = await pageThrough(api, base, created);
  ensure(
    show(seen) === show(created),
    `paging listPets?id=<the ${PAGED_PETS} pets>&limit=${PAGE_LIMIT} by Link saw ${show(seen)}, ` +
      `expected ${show(created)} (each once, in id order)`,
  );
  const expectedPages = Math.ceil(PAGED_PETS / PAGE_LIMIT);
  ensure(pages === expectedPages, `paging took ${pages} pages, expected ${expectedPages}`);
  const walked: number[] = [];
  for await (const pet of everyPet(api, { id: created, limit: PAGE_LIMIT })) {
    walked.push(pet.id);
  }
  ensure(
    show(walked) === show(created),
    `everyPet (docs/generated-clients.md) gave ${walked.length} pets, ${show(walked)}; ` +
      `expected the ${created.length} created, ${show(created)}`,
  );

  // getPet: deprecated, still 200 with the pet and the deprecation headers.
  const gotten = await api.GET("/pets/{petId}", { params: { path: { petId: rex.id } } });
  const got = expect("getPet", gotten, 200, isPet);
  ensure(got.id === rex.id && got.name === "Rex", `getPet answered ${show(got)}`);
  const headers = gotten.response.headers;
  ensure(
    headers.has("deprecation") && headers.has("sunset"),
    `getPet answered without Deprecation and Sunset: ${show(Object.fromEntries(headers))}`,
  );

  const changes = await changeAndRemove(api, first.id, tomTag);

  // placeOrder, approveOrder, deliverOrder: the pet goes pending, then sold.
  const placed = await api.POST("/store/orders", { body: { petId: rex.id } });
  const order = expect("placeOrder", placed, 201, isOrder);
  ensure(
    order.petId === rex.id &&
      order.status === "placed" &&
      !order.complete &&
      order.shipDate == null &&
      order.quantity === 1,
    `placeOrder answered ${show(order)}`,
  );
  location = placed.response.headers.get("location");
  ensure(location === `/v1/store/orders/${order.id}`, `placeOrder: Location ${show(location)}`);
  await expectPetStatus(api, rex.id, "pending", "after placeOrder");

  const orderPath = { params: { path: { orderId: order.id } } };
  const approved = expect(
    "approveOrder",
    await api.POST("/store/orders/{orderId}/approve", orderPath),
    200,
    isOrder,
  );
  ensure(
    approved.id === order.id && approved.status === "approved" && !approved.complete,
    `approveOrder answered ${show(approved)}`,
  );
  const delivered = expect(
    "deliverOrder",
    await api.POST("/store/orders/{orderId}/deliver", orderPath),
    200,
    isOrder,
  );
  ensure(
    delivered.id === order.id &&
      delivered.status === "delivered" &&
      delivered.complete &&
      typeof delivered.shipDate === "string" &&
      /(Z|[+-]\d\d:\d\d)$/.test(delivered.shipDate) &&
      !Number.isNaN(Date.parse(delivered.shipDate)),
    `deliverOrder answered ${show(delivered)}`,
  );
  const fetched = expect(
    "getOrder",
    await api.GET("/store/orders/{orderId}", orderPath),
    200,
    isOrder,
  );
  ensure(
    fetched.status === "delivered" && fetched.complete,
    `getOrder after deliverOrder answered ${show(fetched)}`,
  );
  await expectPetStatus(api, rex.id, "sold", "after deliverOrder");
  // The README's own listing, by status: on this fresh server only Rex was sold.
  const soldAnswer = await api.GET("/pets", { params: { query: { status: "sold", limit: 10 } } });
  const sold = expect("listPets?status=sold&limit=10", soldAnswer, 200, isPets);
  ensure(!soldAnswer.response.headers.has("link"), "listPets?status=sold has a next page");
  ensure(
    show(sold.map((pet) => pet.id)) === show([rex.id]),
    `listPets?status=sold answered ${show(sold)}, expected only Rex (${rex.id})`,
  );

  // Errors, each openapi-fetch's `error` typed as the generated `Error`, with its code and status.
  const errors: number[] = [];
  const error = expectError(
    "createPet categoryId 0",
    await api.POST("/pets", { body: { name: "Zero", categoryId: 0 } }),
    400,
    "validation_failed",
  );
  ensure(
    error.message.includes("categoryId"),
    `the message does not name categoryId: ${show(error.message)}`,
  );
  errors.push(400);
  expectError(
    "listPets limit=0",
    await api.GET("/pets", { params: { query: { limit: 0 } } }),
    400,
    "invalid_parameter",
  );
  errors.push(400);
  expectError("listPets without a key", await client(base).GET("/pets"), 401, "unauthorized");
  errors.push(401);
  expectError(
    "createPet with a bogus key",
    await client(base, "not-a-key").POST("/pets", { body: { name: "Nobody", categoryId: 1 } }),
    401,
    "unauthorized",
  );
  errors.push(401);
  const missing = Math.max(...created) + 1_000_000;
  expectError(
    "getPet of a missing pet",
    await api.GET("/pets/{petId}", { params: { path: { petId: missing } } }),
    404,
    "not_found",
  );
  errors.push(404);
  expectError(
    "getOrder of a missing order",
    await api.GET("/store/orders/{orderId}", {
      params: { path: { orderId: order.id + 1_000_000 } },
    }),
    404,
    "not_found",
  );
  errors.push(404);
  expectError(
    "placeOrder for a sold pet",
    await api.POST("/store/orders", { body: { petId: rex.id } }),
    409,
    "conflict",
  );
  errors.push(409);
  expectError(
    "deliverOrder of a delivered order",
    await api.POST("/store/orders/{orderId}/deliver", orderPath),
    409,
    "conflict",
  );
  errors.push(409);

  // The feed: every change above, in the order it was made, and none of the refused ones (nor the
  // replayed retry). Placing the order made Rex pending and delivering it made him sold.
  const changesMade: [EventType, number][] = [
    ["pet.created", rex.id],
    ["pet.created", first.id],
    ...created.map((id): [EventType, number] => ["pet.created", id]),
    ["pet.updated", first.id],
    ["pet.removed", first.id],
    ["pet.updated", rex.id],
    ["order.placed", order.id],
    ["order.approved", order.id],
    ["order.delivered", order.id],
    ["pet.updated", rex.id],
  ];
  const feed = await readTheFeed(api, base, changesMade, order.id);
  const webhooks = await webhookEndpoint(api);

  return (
    `createPet x${PAGED_PETS + 1}, listPets ${PAGED_PETS} pets in ${pages} pages by Link, ` +
    `getPet, ${changes}, order ${order.id} placed/approved/delivered (pet sold), ` +
    `${errors.length} typed ` +
    `errors (${errors.join(", ")}), ${feed}, ${webhooks}`
  );
}

async function main(): Promise<number> {
  const base = process.env["PETSTORE_URL"];
  const key = process.env["PETSTORE_KEY"];
  if (!base || !key) {
    console.error("typescript: set PETSTORE_URL (http://HOST:PORT/v1) and PETSTORE_KEY");
    return 2;
  }
  const start = performance.now();
  try {
    const summary = await walkthrough(base.replace(/\/+$/, ""), key);
    const seconds = ((performance.now() - start) / 1000).toFixed(1);
    console.log(`openapi-fetch client: walk-through passed in ${seconds} s: ${summary}`);
    return 0;
  } catch (failure) {
    // A mismatch says what was expected and what came; anything else (a refused connection, a
    // body that is not JSON) is a failure too, with its stack.
    const message = failure instanceof Mismatch ? failure.message : String(failure);
    console.error(`openapi-fetch client: walk-through FAILED: ${message}`);
    if (!(failure instanceof Mismatch) && failure instanceof Error && failure.stack) {
      console.error(failure.stack);
    }
    return 1;
  }
}

process.exitCode = await main();
