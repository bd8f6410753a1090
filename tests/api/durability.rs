//! What survives: a 201 means the pet is stored (it outlives `kill -9`), keys outlive restarts,
//! and many concurrent creates never collide or get lost.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{eventually, send, try_send, TestApp};

async fn created_pets_and_keys_survive_kill_9_and_restart(mut app: TestApp) {
    let rex = app
        .create_pet(json!({"name": "Rex", "categoryId": 3, "status": "pending"}))
        .await;

    app.kill_and_restart();

    let response = send(app.get(&format!("/v1/pets/{}", rex["id"])), None).await;
    assert_eq!(
        response.status.as_u16(),
        200,
        "same key, new process: {}",
        response.body
    );
    assert_eq!(response.json(), rex);
    let next = app
        .create_pet(json!({"name": "Tom", "categoryId": 3}))
        .await;
    assert!(
        next["id"].as_i64() > rex["id"].as_i64(),
        "ids keep increasing after a restart"
    );
}

/// 64 clients create pets as fast as they are answered, and the server is killed (`kill -9`) in
/// the middle of it: every pet whose 201 was received is there after the restart, exactly as
/// the 201 described it. (Creates are committed in groups; none is answered before its group's
/// commit is on disk.)
async fn every_acknowledged_create_survives_kill_9_under_load(mut app: TestApp) {
    const CLIENTS: usize = 64;
    let acknowledged = RefCell::new(Vec::<Value>::new());
    // Each client creates pets until a request goes unanswered: the server has died under it.
    let client = |c: usize| {
        let (app, acknowledged) = (&app, &acknowledged);
        async move {
            for n in 0.. {
                let body = json!({"name": format!("client {c} pet {n}"), "categoryId": 1 + c % 9});
                match try_send(app.post_json("/v1/pets"), Some(body.to_string())).await {
                    Ok(response) => {
                        assert_eq!(response.status.as_u16(), 201, "{}", response.body);
                        acknowledged.borrow_mut().push(response.json());
                    }
                    Err(_) => return,
                }
            }
        }
    };
    let killer = async {
        eventually(
            Duration::from_secs(20),
            "1,000 creates answered",
            async || match acknowledged.borrow().len() {
                enough if enough >= 1_000 => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
        app.kill_9();
    };
    futures_util::future::join(killer, join_all((0..CLIENTS).map(client))).await;
    let acknowledged = acknowledged.into_inner();

    app.restart();
    let stored: BTreeMap<i64, Value> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .into_iter()
        .map(|pet| (pet["id"].as_i64().expect("id"), pet))
        .collect();
    for pet in &acknowledged {
        let id = pet["id"].as_i64().expect("id");
        assert_eq!(
            stored.get(&id),
            Some(pet),
            "pet {id} was answered 201 but is not stored as answered"
        );
    }
}

async fn two_hundred_concurrent_creates_get_two_hundred_distinct_ids(app: TestApp) {
    let requests = (0..200).map(|n| {
        let body = json!({"name": format!("pet {n}"), "categoryId": 1 + n % 5}).to_string();
        send(app.post_json("/v1/pets"), Some(body))
    });
    let responses = join_all(requests).await;

    let mut ids = BTreeSet::new();
    for response in &responses {
        assert_eq!(response.status.as_u16(), 201, "{}", response.body);
        ids.insert(response.json()["id"].as_i64().expect("id"));
    }
    assert_eq!(ids.len(), 200, "ids collided");

    let reads = ids
        .iter()
        .map(|id| send(app.get(&format!("/v1/pets/{id}")), None));
    for response in join_all(reads).await {
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    }
    let listed: BTreeSet<i64> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .iter()
        .map(|pet| pet["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(
        listed, ids,
        "the listing does not show every created pet exactly once"
    );
}

on_backends!(
    process [sqlite, postgres]
    created_pets_and_keys_survive_kill_9_and_restart,
    every_acknowledged_create_survives_kill_9_under_load,
);

mod all {
    use super::*;
    on_backends!(
        [memory, sqlite, postgres]
        two_hundred_concurrent_creates_get_two_hundred_distinct_ids,
    );
}
