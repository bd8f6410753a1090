//! Every kind of write shares SQLite's one writer: while a crowd of keyed creates keeps the
//! writer busy, orders placed and approved meanwhile are each answered in turn, none failing
//! with `database is locked` (a 503) after waiting out SQLite's busy timeout for the lock.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use petstore_test_support::{eventually, send, Backend, TestApp, TestResponse};

/// Clients creating pets with an idempotency key, back to back.
const CREATORS: usize = 32;

/// Clients each placing an order for a pet of their own and approving it.
const ORDER_CLIENTS: usize = 12;

/// Makes every transaction that stores the crowd's pets take long (each of its pets costs a
/// join of a million rows), so the writer holds SQLite's write lock nearly all the time, as it
/// does under a heavy stream of creates, while the order writes arrive.
const SLOW_CROWD: &str = "
    CREATE TABLE ballast (n INTEGER);
    WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter WHERE n < 1000)
        INSERT INTO ballast SELECT n FROM counter;
    CREATE TRIGGER slow_crowd AFTER INSERT ON pets WHEN NEW.name = 'Crowd'
    BEGIN
        SELECT count(*) FROM ballast AS a, ballast AS b;
    END;";

/// An order write not answered as it should have been.
#[derive(Debug)]
#[allow(dead_code)] // Read in the failure message.
struct Failed {
    what: &'static str,
    status: u16,
    body: String,
    after: Duration,
}

/// The answer's `id` if it has `status`, else what went wrong.
fn expect(
    what: &'static str,
    status: u16,
    answer: &TestResponse,
    after: Duration,
) -> Result<i64, Failed> {
    if answer.status.as_u16() == status {
        return Ok(answer.json()["id"].as_i64().expect("an id"));
    }
    Err(Failed {
        what,
        status: answer.status.as_u16(),
        body: answer.body.clone(),
        after,
    })
}

/// Places an order for `pet_id` and approves it (as the staff); each write's failure.
async fn place_and_approve(app: &TestApp, staff: &str, pet_id: i64) -> Result<(), Failed> {
    let asked = Instant::now();
    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet_id}).to_string()),
    )
    .await;
    let order_id = expect("placeOrder", 201, &placed, asked.elapsed())?;
    let asked = Instant::now();
    let approved = send(
        app.post_json_as(staff, &format!("/v1/store/orders/{order_id}/approve")),
        None,
    )
    .await;
    expect("approveOrder", 200, &approved, asked.elapsed()).map(|_| ())
}

#[actix_web::test]
async fn orders_placed_and_approved_while_creates_keep_the_writer_busy_all_succeed() {
    let app = TestApp::builder(Backend::Sqlite)
        // The orders are all placed with the app's one `write` key.
        .setting("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "100")
        .spawn()
        .await;
    let staff = app.staff_key().await;
    let mut order_pets = Vec::new();
    for _ in 0..ORDER_CLIENTS {
        let pet = app
            .create_pet(json!({"name": "Rex", "categoryId": 1}))
            .await;
        order_pets.push(pet["id"].as_i64().expect("id"));
    }
    app.execute_sql(SLOW_CROWD);
    let creating = Cell::new(true);
    let created = Cell::new(0_usize);
    let create_failures: RefCell<Vec<(u16, String)>> = RefCell::new(Vec::new());

    let creator = |client: usize| {
        let (app, creating, created, failures) = (&app, &creating, &created, &create_failures);
        async move {
            let mut n = 0;
            while creating.get() {
                n += 1;
                let response = send(
                    app.post_json("/v1/pets")
                        .insert_header(("Idempotency-Key", format!("crowd-{client}-{n}"))),
                    Some(json!({"name": "Crowd", "categoryId": 1}).to_string()),
                )
                .await;
                if response.status.as_u16() == 201 {
                    created.set(created.get() + 1);
                } else {
                    failures
                        .borrow_mut()
                        .push((response.status.as_u16(), response.body));
                }
            }
        }
    };
    let orders = async {
        // Once a group of the crowd is stored, the writer is busy with the next one.
        eventually(Duration::from_secs(30), "a create stored", async || {
            if created.get() > 0 {
                Ok(())
            } else {
                Err(format!(
                    "{} creates refused",
                    create_failures.borrow().len()
                ))
            }
        })
        .await;
        let outcomes = join_all(
            order_pets
                .iter()
                .map(|&pet_id| place_and_approve(&app, &staff, pet_id)),
        )
        .await;
        creating.set(false);
        outcomes
    };
    let (_, outcomes) =
        futures_util::future::join(join_all((0..CREATORS).map(creator)), orders).await;

    let failures: Vec<Failed> = outcomes.into_iter().filter_map(Result::err).collect();
    assert!(
        failures.is_empty(),
        "order writes failed while {} pets of the crowd were stored: {failures:#?}",
        created.get()
    );
    assert!(
        create_failures.borrow().is_empty(),
        "creates failed: {:?}",
        create_failures.borrow()
    );
}
