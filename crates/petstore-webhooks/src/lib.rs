//! The webhooks' outbound adapter: what the delivery use cases of `petstore-application` need to
//! reach the outside world.
//!
//! - [`HttpsSender`] (the `WebhookSender` port): one signed attempt over HTTPS, resolved once,
//!   every address checked against the domain's `AddressPolicy`, connected to a checked address
//!   only, within one deadline. Made from [`SenderSettings`].
//! - [`SealedVault`] (the `SecretVault` port): makes signing secrets and seals them at rest with a
//!   key derived from the API key secret.
//!
//! The signature itself (`signature`) is Standard Webhooks 1.0's.

mod client;
mod settings;
mod signature;
mod vault;

pub use client::{HttpsSender, SenderError};
pub use settings::{parse_hosts, HostsError, SenderSettings, MAX_TIMEOUT, MIN_TIMEOUT};
pub use vault::SealedVault;
