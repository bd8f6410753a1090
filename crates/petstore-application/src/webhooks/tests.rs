//! The webhook use cases against mocked ports, at a fixed instant: what each endpoint use case
//! asks of the repository and the vault and answers (`endpoints`), how the feed's events are
//! fanned out (`fan_out`), and how claimed deliveries are sent and settled (`deliver`).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use petstore_domain::{AddressPolicy, EventId, SigningSecret};

use super::*;
use crate::clock::MockClock;

mod deliver;
mod endpoints;
mod fan_out;

/// The tests' instant, in milliseconds since the epoch; not a whole second, so that a
/// timestamp in seconds differs from it.
const NOW_MS: i64 = 1_800_000_000_250;

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(UNIX_EPOCH + Duration::from_millis(NOW_MS.unsigned_abs()));
    Arc::new(clock)
}

fn endpoint_id(value: i64) -> EndpointId {
    EndpointId::parse(value).unwrap()
}

fn delivery_id(value: i64) -> DeliveryId {
    DeliveryId::parse(value).unwrap()
}

fn url(host: &str) -> WebhookUrl {
    WebhookUrl::parse(
        &format!("https://{host}/hooks"),
        AddressPolicy {
            allow_loopback: false,
        },
    )
    .unwrap()
}

fn secret(name: &str) -> SigningSecret {
    SigningSecret::new(format!("whsec_{name}")).unwrap()
}

fn event_id(byte: u8) -> EventId {
    EventId::from_random([byte; 16])
}
