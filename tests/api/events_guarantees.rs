//! The event feed's two hard guarantees, under load against the real binary: a change and its
//! event are committed together or not at all, even when the server is killed (`kill -9`) in
//! the middle of 64 clients' writes; and with two instances writing to one PostgreSQL database
//! at once, a reader paging the feed never has an event appear behind its position.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures_util::future::{join, join_all};
use serde_json::{json, Value};

use petstore_test_support::{backend_named, eventually, send, try_send, Backend, TestApp};

use crate::instances::two_instances;

petstore_test_support::database::on_backends!(
    #[actix_web::test] super::spawn_for_orders,
    [sqlite, postgres]
    every_committed_change_has_exactly_one_event_after_kill_9_under_load,
);

/// The binary in a process of its own, letting its one key hold as many open orders as the
/// clients place.
async fn spawn_for_orders(backend: &str) -> TestApp {
    TestApp::builder(backend_named(backend))
        .in_a_process()
        .setting("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "100000")
        .spawn()
        .await
}

/// What the clients were answered before the server died.
#[derive(Default)]
struct Acknowledged {
    created: Vec<Value>,
    renamed: Vec<Value>,
    ordered: Vec<Value>,
}

impl Acknowledged {
    fn count(&self) -> usize {
        self.created.len() + self.renamed.len() + self.ordered.len()
    }
}

/// 64 clients create pets, rename some and order others (so pets, their changes and orders all
/// write events) until the server is killed under them; after the restart the feed holds
/// exactly one event per change that was answered, and nothing that was not committed: every
/// stored pet has its `pet.created`, every event's pet or order is stored, and each pet's last
/// event is the pet as stored (a change committed whose answer the kill lost has its event too).
async fn every_committed_change_has_exactly_one_event_after_kill_9_under_load(mut app: TestApp) {
    const CLIENTS: usize = 64;
    let staff = app.staff_key().await;
    let acknowledged = RefCell::new(Acknowledged::default());
    // Each client writes until a request goes unanswered: the server has died under it.
    let client = |c: usize| {
        let (app, staff, acknowledged) = (&app, &staff, &acknowledged);
        async move {
            for n in 0.. {
                let body = json!({"name": format!("client {c} pet {n}"), "categoryId": 1 + c % 9});
                let Ok(created) = try_send(app.post_json("/v1/pets"), Some(body.to_string())).await
                else {
                    return;
                };
                assert_eq!(created.status.as_u16(), 201, "{}", created.body);
                let pet = created.json();
                acknowledged.borrow_mut().created.push(pet.clone());
                let pet_path = format!("/v1/pets/{}", pet["id"]);
                let (path, request, body) = match n % 3 {
                    0 => continue,
                    1 => (
                        "renamed",
                        app.client
                            .patch(app.url(&pet_path))
                            .bearer_auth(staff)
                            .insert_header(("Content-Type", "application/merge-patch+json")),
                        json!({"name": format!("client {c} pet {n} renamed")}),
                    ),
                    _ => (
                        "ordered",
                        app.post_json("/v1/store/orders"),
                        json!({"petId": pet["id"]}),
                    ),
                };
                let Ok(changed) = try_send(request, Some(body.to_string())).await else {
                    return;
                };
                assert!(
                    changed.status.is_success(),
                    "{path} {pet_path}: {} {}",
                    changed.status,
                    changed.body
                );
                let mut acknowledged = acknowledged.borrow_mut();
                match path {
                    "renamed" => acknowledged.renamed.push(changed.json()),
                    _ => acknowledged.ordered.push(changed.json()),
                }
            }
        }
    };
    let killer = async {
        eventually(
            Duration::from_secs(20),
            "600 changes answered",
            async || match acknowledged.borrow().count() {
                enough if enough >= 600 => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
        app.kill_9();
    };
    join(killer, join_all((0..CLIENTS).map(client))).await;
    let acknowledged = acknowledged.into_inner();

    app.restart();
    let stored: BTreeMap<i64, Value> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .into_iter()
        .map(|pet| (id_of(&pet), pet))
        .collect();
    let complete = |events: &[Value]| -> Result<(), String> {
        let created: BTreeSet<i64> = of_type(events, "pet.created").map(id_of).collect();
        let missing: Vec<&i64> = stored.keys().filter(|id| !created.contains(id)).collect();
        let ordered = of_type(events, "order.placed").count();
        if missing.is_empty() && ordered >= acknowledged.ordered.len() {
            Ok(())
        } else {
            Err(format!(
                "{} events; stored pets without pet.created: {missing:?}; {ordered} of {} \
                 answered orders placed",
                events.len(),
                acknowledged.ordered.len()
            ))
        }
    };
    let events = settled_feed(&app, &staff, complete).await;

    let once = |event_type: &str, answered: &Value| {
        let matching = of_type(&events, event_type)
            .filter(|data| *data == answered)
            .count();
        assert_eq!(
            matching, 1,
            "{event_type} events for the answered {answered}"
        );
    };
    for pet in &acknowledged.created {
        once("pet.created", pet);
    }
    for pet in &acknowledged.renamed {
        once("pet.updated", pet);
    }
    for order in &acknowledged.ordered {
        once("order.placed", order);
    }
    let mut last_of_pet = BTreeMap::new();
    for event in &events {
        let data = &event["data"];
        match event["type"].as_str() {
            Some("pet.created" | "pet.updated") => {
                assert!(
                    stored.contains_key(&id_of(data)),
                    "an event for a pet that is not stored: {event}"
                );
                last_of_pet.insert(id_of(data), data);
            }
            Some("order.placed") => {
                let path = format!("/v1/store/orders/{}", data["id"]);
                let order = send(app.get_as(&staff, &path), None).await;
                assert_eq!(
                    order.status.as_u16(),
                    200,
                    "an event for an order that is not stored: {event}"
                );
                assert_eq!(&order.json(), data, "the order as stored");
            }
            _ => panic!("an event no client's change made: {event}"),
        }
    }
    for (id, pet) in &stored {
        assert_eq!(
            last_of_pet.get(id).copied(),
            Some(pet),
            "pet {id}'s last event is not the pet as stored"
        );
    }
    let created = of_type(&events, "pet.created").count();
    assert_eq!(created, stored.len(), "one pet.created per stored pet");
}

/// Renames, unlike creates (which take turns on a lock), run side by side. This makes each hold
/// its transaction open a random 0-50 ms after it took its transaction id, as a slow disk or a
/// busy server would, so that they commit out of the order of their ids.
const SLOW_RENAMES: &str = "CREATE FUNCTION slow_rename() RETURNS trigger LANGUAGE plpgsql AS \
    $$ BEGIN PERFORM pg_sleep(random() * 0.05); RETURN NEW; END $$; \
    CREATE TRIGGER slow_rename AFTER UPDATE ON pets \
    FOR EACH ROW EXECUTE FUNCTION slow_rename();";

#[actix_web::test]
async fn a_reader_paging_while_two_instances_write_never_misses_an_event() {
    let (app, other) = two_instances().await;
    app.postgres().execute(SLOW_RENAMES);
    let staff = app.staff_key().await;
    a_reader_sees_every_event_once_in_order(&app, &staff, &[&app.address, &other.address]).await;
}

/// Writers create pets through one of `addresses` and rename them (with the `staff` key)
/// through the next (8 writers per address) while a reader pages the feed through the first,
/// 10 events at a time, from the start to the end again and again: when the writing is over,
/// the events it was given, in the order given, are the whole feed read afresh. An event
/// committed behind the reader's position would be in the fresh read and missing from the
/// reader's.
async fn a_reader_sees_every_event_once_in_order(
    app: &TestApp,
    staff: &str,
    addresses: &[&String],
) {
    const WRITERS_PER_INSTANCE: usize = 8;
    const PETS_PER_WRITER: usize = 16;
    // The event each change answered is to make, by type and the pet's (unique) name.
    let written = RefCell::new(BTreeSet::<(String, String)>::new());
    let writing = Cell::new(true);

    let writer = |w: usize| {
        let written = &written;
        let (here, there) = (
            addresses[w % addresses.len()],
            addresses[(w + 1) % addresses.len()],
        );
        async move {
            for n in 0..PETS_PER_WRITER {
                let name = format!("writer {w} pet {n}");
                let request = app
                    .client
                    .post(format!("{here}/v1/pets"))
                    .bearer_auth(&app.api_key)
                    .insert_header(("Content-Type", "application/json"));
                let body = json!({"name": name, "categoryId": 1});
                let created = send(request, Some(body.to_string())).await;
                assert_eq!(created.status.as_u16(), 201, "{}", created.body);
                written
                    .borrow_mut()
                    .insert(("pet.created".to_owned(), name.clone()));

                let renamed = format!("{name} renamed");
                let request = app
                    .client
                    .patch(format!("{there}/v1/pets/{}", id_of(&created.json())))
                    .bearer_auth(staff)
                    .insert_header(("Content-Type", "application/merge-patch+json"));
                let body = json!({"name": renamed});
                let response = send(request, Some(body.to_string())).await;
                assert_eq!(response.status.as_u16(), 200, "{}", response.body);
                written
                    .borrow_mut()
                    .insert(("pet.updated".to_owned(), renamed));
            }
        }
    };
    let writers = async {
        join_all((0..WRITERS_PER_INSTANCE * addresses.len()).map(writer)).await;
        writing.set(false);
    };
    let has_every_written = |events: &[Value]| {
        let made: BTreeSet<(String, String)> = events.iter().map(made_by).collect();
        written.borrow().difference(&made).count()
    };

    let reader = async {
        let mut given = Vec::<Value>::new();
        let mut next = "/v1/events?limit=10".to_owned();
        let mut caught_up_while_writing = 0;
        let mut give_up = None;
        loop {
            let was_writing = writing.get();
            let page = feed_page(app, &app.api_key, &next).await;
            given.extend(page.events);
            next = page.next;
            if page.more {
                continue;
            }
            if was_writing {
                caught_up_while_writing += 1;
                continue;
            }
            // The writing is over: read on until every change's event came (within a deadline:
            // one that fell behind the reader never comes).
            let give_up = *give_up.get_or_insert_with(|| Instant::now() + Duration::from_secs(10));
            if has_every_written(&given) == 0 || Instant::now() > give_up {
                return (given, caught_up_while_writing);
            }
        }
    };

    let ((), (given, caught_up_while_writing)) = join(writers, reader).await;
    assert_eq!(
        written.borrow().len(),
        2 * WRITERS_PER_INSTANCE * addresses.len() * PETS_PER_WRITER
    );
    assert!(
        caught_up_while_writing >= 1,
        "the reader never reached the end of the feed while pets were being written"
    );
    let afresh = settled_feed(app, &app.api_key, |events| {
        match has_every_written(events) {
            0 => Ok(()),
            missing => Err(format!("{missing} changes without their event")),
        }
    })
    .await;
    let ids = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|event| event["id"].as_str().expect("an id").to_owned())
            .collect()
    };
    let (given, afresh) = (ids(&given), ids(&afresh));
    let given_set: BTreeSet<&String> = given.iter().collect();
    let afresh_set: BTreeSet<&String> = afresh.iter().collect();
    let missed: Vec<&&String> = afresh_set.difference(&given_set).collect();
    assert!(
        missed.is_empty(),
        "{} events committed behind the reader's position never reached it, among them {:?}",
        missed.len(),
        &missed[..missed.len().min(5)]
    );
    assert_eq!(
        given_set.len(),
        given.len(),
        "the reader was given an event twice"
    );
    assert_eq!(
        given, afresh,
        "the reader's events are not the feed, in its order"
    );
}

/// The change an event stands for: its type and its pet's name.
fn made_by(event: &Value) -> (String, String) {
    let name = event["data"]["name"].as_str().expect("a pet's name");
    (
        event["type"].as_str().expect("a type").to_owned(),
        name.to_owned(),
    )
}

/// One page of the feed.
struct FeedPage {
    events: Vec<Value>,
    more: bool,
    /// Where its `Link: <...>; rel="next"` points.
    next: String,
}

async fn feed_page(app: &TestApp, key: &str, path: &str) -> FeedPage {
    let response = send(app.get_as(key, path), None).await;
    assert_eq!(response.status.as_u16(), 200, "{path}: {}", response.body);
    FeedPage {
        events: response.json().as_array().expect("an array").clone(),
        more: response.header("x-more-events") == Some("true"),
        next: crate::events::next_of(&response),
    }
}

/// The whole feed `key` reads from the start, following `Link` until `X-More-Events: false`,
/// once `complete` accepts it: at once on SQLite; on PostgreSQL, where an event is readable
/// only once every older transaction ended, within a deadline.
async fn settled_feed(
    app: &TestApp,
    key: &str,
    complete: impl Fn(&[Value]) -> Result<(), String>,
) -> Vec<Value> {
    let read = async || {
        let mut events = Vec::new();
        let mut next = "/v1/events?limit=100".to_owned();
        loop {
            let page = feed_page(app, key, &next).await;
            events.extend(page.events);
            next = page.next;
            if !page.more {
                return events;
            }
        }
    };
    if app.backend != Backend::Postgres {
        let events = read().await;
        if let Err(incomplete) = complete(&events) {
            panic!("the feed is incomplete: {incomplete}");
        }
        return events;
    }
    eventually(Duration::from_secs(10), "the feed complete", async || {
        let events = read().await;
        complete(&events).map(|()| events)
    })
    .await
}

/// The `data` of the events of `event_type`.
fn of_type<'a>(events: &'a [Value], event_type: &'a str) -> impl Iterator<Item = &'a Value> {
    events
        .iter()
        .filter(move |event| event["type"] == event_type)
        .map(|event| &event["data"])
}

fn id_of(resource: &Value) -> i64 {
    resource["id"].as_i64().expect("an id")
}
