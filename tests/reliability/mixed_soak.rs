//! A mixed soak on SQLite: 32 connections, each request drawn at random as 40 % keyed creates,
//! 30 % listings, 20 % reads of one pet and 10 % order writes (each client places an order for
//! a pet it created, then approves it, then delivers it). Every write shares SQLite's one
//! writer, so none may fail with `database is locked` or any other 503: every request gets its
//! expected answer. Prints the throughput and the order writes' latency.
//!
//! Runs [`DEFAULT_SECONDS`]; `MIXED_SOAK_SECONDS` sets another length (300 for the five-minute
//! soak), and `MIXED_SOAK_BINARY` another build of `petstore` to soak (e.g. a release build).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use petstore_test_support::{try_send, Backend, TestApp, TestResponse};

const CONNECTIONS: usize = 32;

const DEFAULT_SECONDS: u64 = 75;

/// Pets created before the soak, so that the first reads find some.
const SEEDED_PETS: usize = 200;

/// The request kinds of the mix, by the share of requests (percent) each gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    KeyedCreate,
    ListPets,
    GetPet,
    PlaceOrder,
    ApproveOrder,
    DeliverOrder,
}

/// What one client's orders are at.
enum OrderStep {
    /// The next order write places an order for a pet the client created.
    Place,
    Approve(i64),
    Deliver(i64),
}

/// A small, seeded random stream (xorshift64*): each client draws its own mix.
struct Draws(u64);

impl Draws {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

/// What the soak saw.
#[derive(Default)]
struct Tally {
    answered: BTreeMap<Kind, usize>,
    latencies: BTreeMap<Kind, Vec<Duration>>,
    /// Every answer that was not the expected one (the kind, its status, its body).
    unexpected: Vec<(Kind, u16, String)>,
    /// Requests that got no whole answer.
    unanswered: Vec<(Kind, String)>,
}

impl Tally {
    fn record(
        &mut self,
        kind: Kind,
        expected: u16,
        outcome: &Result<TestResponse, String>,
        took: Duration,
    ) -> bool {
        *self.answered.entry(kind).or_default() += 1;
        self.latencies.entry(kind).or_default().push(took);
        match outcome {
            Ok(response) if response.status.as_u16() == expected => true,
            Ok(response) => {
                self.unexpected
                    .push((kind, response.status.as_u16(), response.body.clone()));
                false
            }
            Err(error) => {
                self.unanswered.push((kind, error.clone()));
                false
            }
        }
    }

    fn order_latencies(&self) -> Vec<Duration> {
        let mut all: Vec<Duration> = [Kind::PlaceOrder, Kind::ApproveOrder, Kind::DeliverOrder]
            .iter()
            .filter_map(|kind| self.latencies.get(kind))
            .flatten()
            .copied()
            .collect();
        all.sort_unstable();
        all
    }
}

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}

fn id_of(outcome: &Result<TestResponse, String>) -> Option<i64> {
    outcome.as_ref().ok()?.json()["id"].as_i64()
}

/// One client: draws requests from the mix until `until`.
async fn client(
    app: &TestApp,
    staff: &str,
    number: usize,
    known_pets: &RefCell<Vec<i64>>,
    tally: &RefCell<Tally>,
    until: Instant,
) {
    let mut draws = Draws(0x9e37_79b9_7f4a_7c15 ^ (number as u64 + 1).wrapping_mul(0x1000_0001));
    let mut own_pets: Vec<i64> = Vec::new();
    let mut step = OrderStep::Place;
    let mut creates = 0;
    while Instant::now() < until {
        let share = draws.next(100);
        let started = Instant::now();
        if share < 40 || (share >= 90 && matches!(step, OrderStep::Place) && own_pets.is_empty()) {
            creates += 1;
            let outcome = try_send(
                app.post_json("/v1/pets")
                    .insert_header(("Idempotency-Key", format!("soak-{number}-{creates}"))),
                Some(json!({"name": "Soak", "categoryId": 1}).to_string()),
            )
            .await;
            let took = started.elapsed();
            if tally
                .borrow_mut()
                .record(Kind::KeyedCreate, 201, &outcome, took)
            {
                if let Some(id) = id_of(&outcome) {
                    own_pets.push(id);
                    known_pets.borrow_mut().push(id);
                }
            }
        } else if share < 70 {
            let outcome = try_send(app.get("/v1/pets?limit=20"), None).await;
            tally
                .borrow_mut()
                .record(Kind::ListPets, 200, &outcome, started.elapsed());
        } else if share < 90 {
            let id = {
                let known = known_pets.borrow();
                known[draws.next(known.len() as u64) as usize]
            };
            let outcome = try_send(app.get(&format!("/v1/pets/{id}")), None).await;
            tally
                .borrow_mut()
                .record(Kind::GetPet, 200, &outcome, started.elapsed());
        } else {
            step = match step {
                OrderStep::Place => {
                    let pet_id = own_pets.pop().expect("a pet of its own");
                    let outcome = try_send(
                        app.post_json("/v1/store/orders"),
                        Some(json!({"petId": pet_id}).to_string()),
                    )
                    .await;
                    let placed = tally.borrow_mut().record(
                        Kind::PlaceOrder,
                        201,
                        &outcome,
                        started.elapsed(),
                    );
                    match id_of(&outcome) {
                        Some(order_id) if placed => OrderStep::Approve(order_id),
                        _ => OrderStep::Place,
                    }
                }
                OrderStep::Approve(order_id) => {
                    let outcome = try_send(
                        app.post_json_as(staff, &format!("/v1/store/orders/{order_id}/approve")),
                        None,
                    )
                    .await;
                    let approved = tally.borrow_mut().record(
                        Kind::ApproveOrder,
                        200,
                        &outcome,
                        started.elapsed(),
                    );
                    if approved {
                        OrderStep::Deliver(order_id)
                    } else {
                        OrderStep::Place
                    }
                }
                OrderStep::Deliver(order_id) => {
                    let outcome = try_send(
                        app.post_json_as(staff, &format!("/v1/store/orders/{order_id}/deliver")),
                        None,
                    )
                    .await;
                    tally
                        .borrow_mut()
                        .record(Kind::DeliverOrder, 200, &outcome, started.elapsed());
                    OrderStep::Place
                }
            };
        }
    }
}

#[actix_web::test]
async fn a_mixed_soak_on_sqlite_answers_every_request_and_no_write_fails_for_the_lock() {
    let seconds = std::env::var("MIXED_SOAK_SECONDS")
        .ok()
        .map_or(DEFAULT_SECONDS, |text| {
            text.parse().expect("MIXED_SOAK_SECONDS is a whole number")
        });
    let mut builder = TestApp::builder(Backend::Sqlite)
        .in_a_process()
        // Every client places orders with the one `write` key, up to 32 open at once.
        .setting("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "100000");
    if let Some(binary) = std::env::var_os("MIXED_SOAK_BINARY") {
        builder = builder.binary(binary.into());
    }
    let app = builder.spawn().await;
    let staff = app.staff_key().await;
    let mut seeded = Vec::new();
    for _ in 0..SEEDED_PETS {
        let pet = app
            .create_pet(json!({"name": "Seed", "categoryId": 1}))
            .await;
        seeded.push(pet["id"].as_i64().expect("id"));
    }
    let known_pets = RefCell::new(seeded);
    let tally = RefCell::new(Tally::default());
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);

    join_all(
        (0..CONNECTIONS).map(|number| client(&app, &staff, number, &known_pets, &tally, until)),
    )
    .await;

    let elapsed = started.elapsed();
    let tally = tally.into_inner();
    let total: usize = tally.answered.values().sum();
    let orders = tally.order_latencies();
    let mut creates = tally
        .latencies
        .get(&Kind::KeyedCreate)
        .cloned()
        .unwrap_or_default();
    creates.sort_unstable();
    println!(
        "mixed soak on SQLite, {CONNECTIONS} connections, {:.0} s: {total} requests, {:.0}/s; \
         by kind {:?}",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        tally.answered,
    );
    println!(
        "order writes: {}, p50 {:?}, p99 {:?}, max {:?}; keyed creates: p99 {:?}, max {:?}",
        orders.len(),
        percentile(&orders, 0.50),
        percentile(&orders, 0.99),
        orders.last().copied().unwrap_or_default(),
        percentile(&creates, 0.99),
        creates.last().copied().unwrap_or_default(),
    );
    let unavailable = tally
        .unexpected
        .iter()
        .filter(|(_, status, _)| *status == 503)
        .count();
    println!(
        "unexpected answers: {} ({unavailable} x 503); unanswered: {}",
        tally.unexpected.len(),
        tally.unanswered.len()
    );
    assert!(
        tally.unexpected.is_empty() && tally.unanswered.is_empty(),
        "{} requests were not answered as expected ({unavailable} x 503), e.g. {:?}; {} got no \
         answer, e.g. {:?}",
        tally.unexpected.len(),
        tally.unexpected.iter().take(5).collect::<Vec<_>>(),
        tally.unanswered.len(),
        tally.unanswered.iter().take(5).collect::<Vec<_>>(),
    );
    assert!(
        orders.len() >= CONNECTIONS,
        "only {} order writes in {seconds} s",
        orders.len()
    );
}
