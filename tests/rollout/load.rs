//! The clients of the rollout test and what they saw.

use std::cell::{Cell, RefCell};

use petstore_test_support::{client, next_link_target, try_send};
use serde_json::json;

/// What the clients did, and every request that did not get the answer it should have.
#[derive(Default)]
pub struct Tally {
    requests: Cell<usize>,
    creates: Cell<usize>,
    lists: Cell<usize>,
    gets: Cell<usize>,
    updates: Cell<usize>,
    orders: Cell<usize>,
    removals: Cell<usize>,
    created: RefCell<Vec<i64>>,
    removed: RefCell<Vec<i64>>,
    failures: RefCell<Vec<String>>,
}

impl Tally {
    pub fn requests(&self) -> usize {
        self.requests.get()
    }
    pub fn creates(&self) -> usize {
        self.creates.get()
    }
    pub fn lists(&self) -> usize {
        self.lists.get()
    }
    pub fn gets(&self) -> usize {
        self.gets.get()
    }
    pub fn updates(&self) -> usize {
        self.updates.get()
    }
    pub fn orders(&self) -> usize {
        self.orders.get()
    }
    pub fn removals(&self) -> usize {
        self.removals.get()
    }
    pub fn created_ids(&self) -> Vec<i64> {
        self.created.borrow().clone()
    }
    /// Pets answered 201 and then removed (204).
    pub fn removed_ids(&self) -> Vec<i64> {
        self.removed.borrow().clone()
    }
    pub fn failures(&self) -> Vec<String> {
        self.failures.borrow().clone()
    }
}

fn bump(counter: &Cell<usize>) {
    counter.set(counter.get() + 1);
}

/// One request through the balancer: its body when it got `expected`, else a failure noted.
async fn call(
    tally: &Tally,
    request: awc::ClientRequest,
    body: Option<String>,
    expected: u16,
) -> Option<serde_json::Value> {
    bump(&tally.requests);
    let what = format!("{} {}", request.get_method(), request.get_uri());
    match try_send(request, body).await {
        Ok(response) if response.status.as_u16() == expected => {
            Some(serde_json::from_str(&response.body).unwrap_or_default())
        }
        Ok(response) => {
            tally
                .failures
                .borrow_mut()
                .push(format!("{what}: {} {}", response.status, response.body));
            None
        }
        Err(error) => {
            tally
                .failures
                .borrow_mut()
                .push(format!("{what}: no answer: {error}"));
            None
        }
    }
}

/// Creates a pet for the client `n`: its id once answered 201 (and counted as created).
async fn create(tally: &Tally, request: awc::ClientRequest, name: String) -> Option<i64> {
    let body = json!({"name": name, "categoryId": 1}).to_string();
    let pet = call(tally, request, Some(body), 201).await?;
    bump(&tally.creates);
    let id = pet["id"].as_i64().expect("an id");
    tally.created.borrow_mut().push(id);
    Some(id)
}

/// A client that creates pets, lists a page and follows its `next` link, gets a pet of its own
/// and renames it (PATCH with `If-Match: *`), places and approves an order for one, and removes
/// a pet it created for that (DELETE), round after round, until `stop`. Nothing is retried, so
/// each PATCH must be 200 and each DELETE 204.
pub async fn client_loop(base: &str, key: &str, n: usize, stop: &Cell<bool>, tally: &Tally) {
    let client = client();
    let post = |path: &str| {
        client
            .post(format!("{base}{path}"))
            .bearer_auth(key)
            .insert_header(("Content-Type", "application/json"))
    };
    let get = |path: &str| client.get(format!("{base}{path}")).bearer_auth(key);
    let patch = |path: &str| {
        client
            .patch(format!("{base}{path}"))
            .bearer_auth(key)
            .insert_header(("Content-Type", "application/merge-patch+json"))
            .insert_header(("If-Match", "*"))
    };
    let delete = |path: &str| client.delete(format!("{base}{path}")).bearer_auth(key);
    let mut mine: Vec<i64> = Vec::new();
    let mut round = 0;
    while !stop.get() {
        round += 1;
        if let Some(id) = create(tally, post("/v1/pets"), format!("c{n}-{round}")).await {
            mine.push(id);
        }
        let page = client
            .get(format!("{base}/v1/pets?limit=20"))
            .bearer_auth(key);
        bump(&tally.requests);
        match try_send(page, None).await {
            Ok(response) if response.status == 200 => {
                bump(&tally.lists);
                if let Some(link) = response.header("link") {
                    call(tally, get(&next_link_target(link)), None, 200).await;
                }
            }
            Ok(response) => tally
                .failures
                .borrow_mut()
                .push(format!("list: {} {}", response.status, response.body)),
            Err(error) => tally
                .failures
                .borrow_mut()
                .push(format!("list: no answer: {error}")),
        }
        if let Some(&id) = mine.last() {
            if call(tally, get(&format!("/v1/pets/{id}")), None, 200)
                .await
                .is_some()
            {
                bump(&tally.gets);
            }
            let body = json!({"name": format!("c{n}-{round} renamed")}).to_string();
            let renamed = call(tally, patch(&format!("/v1/pets/{id}")), Some(body), 200).await;
            if renamed.is_some() {
                bump(&tally.updates);
            }
        }
        // Every other round, an order for the newest pet of its own, then its approval.
        if round % 2 == 0 {
            if let Some(id) = mine.pop() {
                let body = json!({"petId": id}).to_string();
                if let Some(order) = call(tally, post("/v1/store/orders"), Some(body), 201).await {
                    let order_id = order["id"].as_i64().expect("an order id");
                    let approve = post(&format!("/v1/store/orders/{order_id}/approve"));
                    if call(tally, approve, None, 200).await.is_some() {
                        bump(&tally.orders);
                    }
                }
            }
        } else if let Some(id) = create(tally, post("/v1/pets"), format!("c{n}-{round} gone")).await
        {
            // The other rounds, a pet created to be removed.
            let removal = delete(&format!("/v1/pets/{id}"));
            if call(tally, removal, None, 204).await.is_some() {
                bump(&tally.removals);
                tally.removed.borrow_mut().push(id);
            }
        }
    }
}
