//! Webhooks in the server: their settings (`settings`), the delivery worker (`worker`), and
//! the wiring of the webhook use cases to storage, the vault and the HTTPS sender ([`start`]).

mod settings;
pub(crate) mod worker;

use std::sync::Arc;

use petstore_application::webhooks::DeliverySettings;
use petstore_application::{
    DeliveryQueue, DeliveryService, EventFeed, SystemClock, WebhookRepository, WebhookService,
};
use petstore_webhooks::{HttpsSender, SealedVault, SenderSettings};

pub use settings::{StaticHosts, WebhookArgs};
use worker::DeliveryWorker;

use crate::AppError;

/// Deliveries one round claims, and events one fan-out round reads.
const CLAIM_BATCH: usize = 64;
const FAN_OUT_BATCH: usize = 200;

/// What the server keeps of webhooks while it serves.
pub(crate) struct Webhooks {
    pub(crate) service: WebhookService,
    /// `None` when no delivery can be made (no trusted certificate outside production).
    pub(crate) worker: Option<DeliveryWorker>,
    /// The delivery use cases, for the purge of finished deliveries.
    pub(crate) deliveries: Option<DeliveryService>,
}

/// The storage ports webhooks use.
pub(crate) struct WebhookStorage {
    pub(crate) endpoints: Arc<dyn WebhookRepository>,
    pub(crate) deliveries: Arc<dyn DeliveryQueue>,
    pub(crate) feed: Arc<dyn EventFeed>,
}

/// Builds the webhook use cases and starts the delivery worker. Secrets are sealed with a key
/// derived from the API key secret (`current`), and opened with it or a `previous` one.
pub(crate) fn start(
    args: &WebhookArgs,
    production: bool,
    storage: WebhookStorage,
    current: &[u8],
    previous: &[&[u8]],
) -> Result<Webhooks, AppError> {
    args.check(production).map_err(AppError::Usage)?;
    let vault = Arc::new(SealedVault::new(current, previous));
    let bodies = petstore_http::webhook_bodies();
    let service = WebhookService::new(
        storage.endpoints,
        vault.clone(),
        Arc::clone(&bodies),
        Arc::new(SystemClock),
    );
    let sender_settings = SenderSettings {
        timeout: args.webhook_timeout,
        allow_loopback: args.webhook_allow_loopback,
        hosts: args.webhook_hosts.0.clone(),
        ca_file: args.webhook_ca_file.clone(),
    };
    let sender = match HttpsSender::new(&sender_settings) {
        Ok(sender) => sender,
        Err(error) if production => {
            return Err(AppError::Usage(format!(
                "webhooks cannot be delivered: {error}"
            )))
        }
        Err(error) => {
            tracing::error!(
                %error,
                "webhooks cannot be delivered, so none will be until a restart with trusted \
                 certificates (install ca-certificates, or set SSL_CERT_FILE or \
                 PETSTORE_WEBHOOK_CA_FILE)"
            );
            return Ok(Webhooks {
                service,
                worker: None,
                deliveries: None,
            });
        }
    };
    let settings = DeliverySettings {
        schedule: args.webhook_retry_schedule.clone(),
        disable_after: args.webhook_disable_after,
        lease: args.webhook_lease,
        attempt_timeout: args.webhook_timeout,
        concurrency: usize::from(args.webhook_concurrency),
        claim_batch: CLAIM_BATCH,
        fan_out_batch: FAN_OUT_BATCH,
        owner: instance_name(),
    };
    let deliveries = DeliveryService::new(
        storage.feed,
        storage.deliveries,
        vault,
        bodies,
        Arc::new(sender),
        Arc::new(SystemClock),
        settings,
    );
    let worker = worker::spawn(deliveries.clone()).map_err(AppError::Thread)?;
    Ok(Webhooks {
        service,
        worker: Some(worker),
        deliveries: Some(deliveries),
    })
}

/// This process's name on its leases: the host and process id, and a random part so that a
/// restarted process with the same id is another owner.
fn instance_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default();
    // Without randomness the host and pid still tell instances apart.
    let random = crate::random::random_hex(4).unwrap_or_default();
    format!("{host}:{}:{random}", std::process::id())
}
