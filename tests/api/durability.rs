//! What survives: a 201 means the pet is stored (it outlives `kill -9`), keys outlive restarts,
//! and many concurrent creates never collide or get lost.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::{send, TestApp};
use crate::on_backends;

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
    [sqlite, postgres]
    created_pets_and_keys_survive_kill_9_and_restart,
);

mod all {
    use super::*;
    on_backends!(
        [memory, sqlite, postgres]
        two_hundred_concurrent_creates_get_two_hundred_distinct_ids,
    );
}
