//! Creates sent one after another and timed, for scenarios that hold createPet's latency to a
//! bound while something happens beside the server (a read held open on its database).

use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::{send, TestApp};

/// When each create was sent, and how long its 201 took.
pub type Timings = RefCell<Vec<(Instant, Duration)>>;

/// Client `client`'s creates, one after another until `stop`, each answered 201 and timed into
/// `timings`.
pub async fn create_until_stopped(
    app: &TestApp,
    client: usize,
    stop: &Cell<bool>,
    timings: &Timings,
) {
    let mut n = 0;
    while !stop.get() {
        let body = json!({"name": format!("client {client} pet {n}"), "categoryId": 1});
        let sent = Instant::now();
        let response = send(app.post_json("/v1/pets"), Some(body.to_string())).await;
        assert_eq!(response.status.as_u16(), 201, "{}", response.body);
        timings.borrow_mut().push((sent, sent.elapsed()));
        n += 1;
    }
}

/// How long the creates sent within `window` took, shortest first.
pub fn sent_within(timings: &[(Instant, Duration)], window: &Range<Instant>) -> Vec<Duration> {
    let mut took: Vec<Duration> = timings
        .iter()
        .filter(|(sent, _)| window.contains(sent))
        .map(|(_, took)| *took)
        .collect();
    took.sort();
    took
}

/// The 99th percentile of `sorted` (shortest first), which must not be empty.
pub fn p99(sorted: &[Duration]) -> Duration {
    sorted[(sorted.len() * 99).div_ceil(100) - 1]
}
