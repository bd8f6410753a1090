//! `HttpState`: what every handler needs, shared by all workers.
//!
//! The use cases inside it are private to this module: a `/v1` handler reaches them only
//! through [`Authorized`], the extractor that checks the caller's key first.

mod access;

pub(crate) use access::{Authorized, Read, Scope, Store, Write};

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix_web::web::Bytes;
use actix_web::HttpRequest;
use petstore_application::{
    CategoryService, EventService, Idempotency, InventoryService, KeyDirectory, OrderService,
    PetService, RepositoryError, WebhookService,
};
use petstore_domain::AddressPolicy;

use crate::observability::metrics::MetricsExporter;
use crate::routing::servers::ApiServers;
use crate::security::auth::ApiKeys;
use crate::security::client_address::{ClientAddressHeader, ClientAddresses, TrustedProxies};
use crate::security::client_limit::CLIENT_POLICY;
use crate::security::cors::CorsOrigins;
use crate::security::rate_limit::{KeyRateLimiter, RateLimit};
use crate::wire::cursor::CursorCodec;

/// The OpenAPI documents as served, in 3.1 and 3.0.3.
#[derive(Debug)]
pub(crate) struct RenderedDocuments {
    pub(crate) v3_1: Bytes,
    pub(crate) v3_0: Bytes,
}

/// The use cases, the key verifier, the cursor codec, the OpenAPI document's servers and the
/// HTTP settings (body size limit and deadline). Cheap to clone (everything is behind an `Arc`
/// or small), as the server clones it once per worker.
#[derive(Debug, Clone)]
pub struct HttpState {
    pets: PetService,
    orders: Option<OrderService>,
    categories: Option<CategoryService>,
    events: Option<EventService>,
    inventory: Option<InventoryService>,
    webhooks: Option<(WebhookService, AddressPolicy)>,
    key_directory: KeyDirectory,
    keys: Arc<ApiKeys>,
    cursors: Arc<CursorCodec>,
    servers: Arc<ApiServers>,
    /// Rendered by `service::docs` on the first request for them, once for all workers.
    documents: Arc<OnceLock<RenderedDocuments>>,
    body_timeout: Duration,
    /// Whether a change without `If-Match` is refused (428).
    if_match_required: bool,
    metrics: Option<MetricsExporter>,
    rate_limiter: Option<Arc<KeyRateLimiter>>,
    /// Buckets per client address, for anonymous requests and refused keys.
    client_rate_limiter: Option<Arc<KeyRateLimiter>>,
    client_addresses: Arc<ClientAddresses>,
    cors: CorsOrigins,
    shutting_down: Arc<AtomicBool>,
    idempotency: Option<Idempotency>,
}

impl HttpState {
    /// Largest accepted JSON request body, in bytes: 64 KiB. A pet is well under 1 KiB; the
    /// limit only has to stop a client from making the server buffer megabytes. Bodies over it
    /// get 413 `payload_too_large`.
    pub const JSON_LIMIT: usize = 64 * 1024;

    /// How long a request body may take to arrive, by default: 10 s. A 64 KiB body needs about
    /// 50 kbit/s to make it; a client that stalls gets 408 and its connection closed.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

    /// The state for a service whose API keys are signed with `key_secret` (and, during a
    /// rotation, may still be signed with one of `previous_secrets`) and recorded in
    /// `key_directory`'s registry. Listing cursors are signed with a key derived from the same
    /// secret, so that every instance sharing it accepts the others' keys and cursors. The
    /// OpenAPI document gets [`ApiServers::default`] until [`with_servers`](Self::with_servers)
    /// says otherwise.
    pub fn new(
        pets: PetService,
        key_directory: KeyDirectory,
        key_secret: &[u8],
        previous_secrets: &[&[u8]],
    ) -> Self {
        Self {
            pets,
            orders: None,
            categories: None,
            events: None,
            inventory: None,
            webhooks: None,
            key_directory,
            keys: Arc::new(ApiKeys::new(key_secret, previous_secrets)),
            cursors: Arc::new(CursorCodec::new(key_secret).with_previous_secrets(previous_secrets)),
            servers: Arc::default(),
            documents: Arc::default(),
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            if_match_required: false,
            metrics: None,
            rate_limiter: None,
            client_rate_limiter: None,
            client_addresses: Arc::default(),
            cors: CorsOrigins::Off,
            shutting_down: Arc::default(),
            idempotency: None,
        }
    }

    /// Serves `GET /metrics` on the API's port with `exporter` (without it, the path is 404).
    pub fn with_metrics(mut self, exporter: MetricsExporter) -> Self {
        self.metrics = Some(exporter);
        self
    }

    /// Limits each key to `limit` (no limit without it).
    pub fn with_rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limiter = Some(Arc::new(KeyRateLimiter::new(limit)));
        self
    }

    /// Limits each client address to `limit` for what no key answers for: anonymous endpoints
    /// and refused keys (no limit without it).
    pub fn with_client_rate_limit(mut self, limit: RateLimit) -> Self {
        self.client_rate_limiter = Some(Arc::new(KeyRateLimiter::named(limit, CLIENT_POLICY)));
        self
    }

    /// Believes the client address these peers name in `header` (none without it: the socket's
    /// peer is the client).
    pub fn with_trusted_proxies(
        mut self,
        proxies: TrustedProxies,
        header: ClientAddressHeader,
    ) -> Self {
        self.client_addresses = Arc::new(ClientAddresses {
            trusted: proxies,
            header,
        });
        self
    }

    pub(crate) fn client_rate_limiter(&self) -> Option<&KeyRateLimiter> {
        self.client_rate_limiter.as_deref()
    }

    /// The client of `req`, for its rate-limit bucket and its log line
    /// (`security::client_address`).
    pub(crate) fn client_address(&self, req: &HttpRequest) -> Option<IpAddr> {
        self.client_addresses.of(req)
    }

    /// Answers cross-origin requests from `origins` (none without it).
    pub fn with_cors(mut self, origins: CorsOrigins) -> Self {
        self.cors = origins;
        self
    }

    /// Idempotent retries (`Idempotency-Key` on every POST). Without them the header is
    /// ignored.
    pub fn with_idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = Some(idempotency);
        self
    }

    pub(crate) fn idempotency(&self) -> Option<&Idempotency> {
        self.idempotency.as_ref()
    }

    /// The flag that, once set, makes `/readyz` answer 503 (the server is shutting down).
    pub fn shutdown_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.shutting_down)
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }

    pub(crate) fn metrics(&self) -> Option<&MetricsExporter> {
        self.metrics.as_ref()
    }

    pub(crate) fn cors(&self) -> &CorsOrigins {
        &self.cors
    }

    /// Sets how long a request body may take to arrive (408 after that).
    pub fn with_body_timeout(mut self, body_timeout: Duration) -> Self {
        self.body_timeout = body_timeout;
        self
    }

    pub(crate) fn body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// Refuses a change (PATCH, DELETE) without `If-Match` with 428, so that no client can
    /// overwrite a change it has not seen; off by default, for clients that predate ETags.
    pub fn with_if_match_required(mut self, required: bool) -> Self {
        self.if_match_required = required;
        self
    }

    pub(crate) fn if_match_required(&self) -> bool {
        self.if_match_required
    }

    /// Sets the `servers` of the OpenAPI document.
    pub fn with_servers(mut self, servers: &ApiServers) -> Self {
        self.servers = Arc::new(servers.clone());
        self.documents = Arc::default();
        self
    }

    /// The OpenAPI documents for this state's servers, rendered by `render` the first time.
    pub(crate) fn documents(
        &self,
        render: impl FnOnce(&ApiServers) -> RenderedDocuments,
    ) -> &RenderedDocuments {
        self.documents.get_or_init(|| render(&self.servers))
    }

    /// Whether storage answers (for `/readyz`, which needs no key).
    pub(crate) async fn check_storage(&self) -> Result<(), RepositoryError> {
        self.pets.check_storage().await
    }

    /// Serves the store's orders with `orders` (without it, their paths are 404).
    pub fn with_orders(mut self, orders: OrderService) -> Self {
        self.orders = Some(orders);
        self
    }

    pub(crate) fn has_orders(&self) -> bool {
        self.orders.is_some()
    }

    /// Serves the categories with `categories` (without it, their paths are 404).
    pub fn with_categories(mut self, categories: CategoryService) -> Self {
        self.categories = Some(categories);
        self
    }

    pub(crate) fn has_categories(&self) -> bool {
        self.categories.is_some()
    }

    /// Serves the event feed with `events` (without it, its path is 404).
    pub fn with_events(mut self, events: EventService) -> Self {
        self.events = Some(events);
        self
    }

    pub(crate) fn has_events(&self) -> bool {
        self.events.is_some()
    }

    /// Serves the webhook endpoints with `webhooks`, their URLs checked by `urls` (without it,
    /// their paths are 404).
    pub fn with_webhooks(mut self, webhooks: WebhookService, urls: AddressPolicy) -> Self {
        self.webhooks = Some((webhooks, urls));
        self
    }

    pub(crate) fn has_webhooks(&self) -> bool {
        self.webhooks.is_some()
    }

    /// Serves the inventory with `inventory` (without it, its path is 404).
    pub fn with_inventory(mut self, inventory: InventoryService) -> Self {
        self.inventory = Some(inventory);
        self
    }

    pub(crate) fn has_inventory(&self) -> bool {
        self.inventory.is_some()
    }

    /// For `/readyz`, which reports a stale view of the key registry.
    pub(crate) fn key_directory(&self) -> &KeyDirectory {
        &self.key_directory
    }

    pub(crate) fn cursors(&self) -> &CursorCodec {
        &self.cursors
    }
}
