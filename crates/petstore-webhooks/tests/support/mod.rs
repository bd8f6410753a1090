//! What the sender's test binaries share: an attempt to a receiver's URL.

use petstore_application::webhooks::Outgoing;
use petstore_domain::{AddressPolicy, EventId, SigningSecret, WebhookUrl};

pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
pub const BODY: &[u8] = br#"{"id":"evt_0","type":"pet.created"}"#;

/// An attempt to `url` (loopback allowed in its parsing), signed with [`SECRET`].
pub fn outgoing(url: &str) -> Outgoing {
    Outgoing {
        url: WebhookUrl::parse(
            url,
            AddressPolicy {
                allow_loopback: true,
            },
        )
        .expect("a receiver's URL parses"),
        webhook_id: EventId::from_random([9; 16]),
        timestamp_s: 1_700_000_000,
        secrets: vec![SigningSecret::new(SECRET.to_owned()).expect("a whsec_ secret")],
        body: BODY.to_vec(),
    }
}
