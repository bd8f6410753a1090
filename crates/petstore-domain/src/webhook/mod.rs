//! Webhooks: the endpoints the store posts its events to, each event's delivery to each of them
//! and the attempts a delivery took. The rules here are pure: which URLs and addresses a
//! delivery may reach (`url`, `address`), and when attempts are made (`schedule`).

mod address;
mod schedule;
mod url;

use std::fmt;

pub use address::{AddressPolicy, AddressRefusal};
pub use schedule::{RetrySchedule, RetryScheduleError};
pub use url::{WebhookUrl, WebhookUrlError};

use crate::{EventId, EventTypes};

/// The type name of the test event a ping sends: never in the feed.
pub const PING_EVENT_TYPE: &str = "webhook.ping";

/// The most endpoints a store keeps: each event is delivered to each of them.
pub const MAX_WEBHOOK_ENDPOINTS: usize = 50;

macro_rules! positive_id {
    ($name:ident, $error:ident, $what:literal) => {
        #[doc = concat!("The id of ", $what, ": an integer from 1, handed out by storage.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i64);

        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        #[error("{} id is an integer from 1", $what)]
        pub struct $error;

        impl $name {
            pub fn parse(raw: i64) -> Result<Self, $error> {
                if raw >= 1 {
                    Ok(Self(raw))
                } else {
                    Err($error)
                }
            }

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

positive_id!(EndpointId, EndpointIdError, "a webhook endpoint");
positive_id!(DeliveryId, DeliveryIdError, "a webhook delivery");

/// Why an endpoint receives nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisabledReason {
    /// A client disabled it.
    Manual,
    /// Every attempt failed for longer than the store waits for an endpoint to recover.
    Failing,
}

impl DisabledReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manual => "manual",
            Self::Failing => "failing",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Manual, Self::Failing]
            .into_iter()
            .find(|reason| reason.as_str() == raw)
    }
}

/// Where the store posts its events, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    pub id: EndpointId,
    pub url: WebhookUrl,
    pub event_types: EventTypes,
    /// `None` while enabled.
    pub disabled: Option<DisabledReason>,
    /// Milliseconds since the epoch: events written from then on are delivered to it.
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl WebhookEndpoint {
    pub fn is_enabled(&self) -> bool {
        self.disabled.is_none()
    }
}

/// An endpoint's signing secret: `whsec_` and the base64 of its key bytes (Standard Webhooks).
/// Shown once, when made; `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(String);

impl SigningSecret {
    const PREFIX: &'static str = "whsec_";

    /// A secret in its `whsec_` form, as made by the adapter that draws its random bytes.
    pub fn new(text: String) -> Option<Self> {
        text.starts_with(Self::PREFIX).then_some(Self(text))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The base64 text of the key, after `whsec_`.
    pub fn key_base64(&self) -> &str {
        &self.0[Self::PREFIX.len()..]
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(..)")
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// An attempt is due now or later.
    Pending,
    /// An attempt was answered with a 2xx.
    Succeeded,
    /// Given up on: see its [`DeliveryFailure`].
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Pending, Self::Succeeded, Self::Failed]
            .into_iter()
            .find(|status| status.as_str() == raw)
    }
}

/// Why a delivery was given up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryFailure {
    /// Its last scheduled attempt failed.
    Exhausted,
    /// Its endpoint was disabled while it was pending.
    EndpointDisabled,
}

impl DeliveryFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exhausted => "exhausted",
            Self::EndpointDisabled => "endpoint_disabled",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Exhausted, Self::EndpointDisabled]
            .into_iter()
            .find(|failure| failure.as_str() == raw)
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptError {
    /// The host's name did not resolve.
    Dns,
    /// The name resolved to an address deliveries never reach.
    BlockedAddress,
    /// No connection could be made.
    Connect,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// No answer within the deadline.
    Timeout,
    /// A 3xx: redirects are never followed.
    Redirect,
    /// Any other status than 2xx.
    Status,
    /// The connection broke before a whole answer arrived.
    Protocol,
}

impl AttemptError {
    pub const ALL: [Self; 8] = [
        Self::Dns,
        Self::BlockedAddress,
        Self::Connect,
        Self::Tls,
        Self::Timeout,
        Self::Redirect,
        Self::Status,
        Self::Protocol,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dns => "dns",
            Self::BlockedAddress => "blocked_address",
            Self::Connect => "connect",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::Redirect => "redirect",
            Self::Status => "status",
            Self::Protocol => "protocol",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|error| error.as_str() == raw)
    }
}

/// One attempt to deliver: when, what the endpoint answered and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first attempt of its delivery.
    pub number: u32,
    pub at_ms: i64,
    /// The answer's status, when one arrived.
    pub status_code: Option<u16>,
    pub latency_ms: u32,
    /// `None` for a success (a 2xx).
    pub error: Option<AttemptError>,
}

impl Attempt {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// One event's delivery to one endpoint, with its attempts so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: DeliveryId,
    pub endpoint_id: EndpointId,
    /// The event's id, sent as `webhook-id`, the same on every attempt.
    pub event_id: EventId,
    /// An [`EventType`](crate::EventType)'s name, or [`PING_EVENT_TYPE`].
    pub event_type: String,
    pub status: DeliveryStatus,
    pub failure: Option<DeliveryFailure>,
    pub created_at_ms: i64,
    /// When the next attempt is due, while pending.
    pub next_attempt_ms: Option<i64>,
    /// Oldest first.
    pub attempts: Vec<Attempt>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn ids_start_at_one() {
        assert_eq!(EndpointId::parse(1).unwrap().get(), 1);
        assert!(EndpointId::parse(0).is_err());
        assert!(DeliveryId::parse(-3).is_err());
    }

    #[test]
    fn names_parse_back() {
        for error in AttemptError::ALL {
            assert_eq!(AttemptError::parse(error.as_str()), Some(error));
        }
        for status in [
            DeliveryStatus::Pending,
            DeliveryStatus::Succeeded,
            DeliveryStatus::Failed,
        ] {
            assert_eq!(DeliveryStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(DeliveryStatus::parse("done"), None);
        assert_eq!(
            DeliveryFailure::parse("endpoint_disabled"),
            Some(DeliveryFailure::EndpointDisabled)
        );
        assert_eq!(
            DisabledReason::parse("failing"),
            Some(DisabledReason::Failing)
        );
    }

    #[test]
    fn a_secret_is_never_printed() {
        let secret = SigningSecret::new("whsec_c2VjcmV0".to_owned()).unwrap();
        assert_eq!(format!("{secret:?}"), "SigningSecret(..)");
        assert_eq!(secret.key_base64(), "c2VjcmV0");
        assert!(SigningSecret::new("secret".to_owned()).is_none());
    }
}
