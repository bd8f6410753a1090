//! The HTTP adapter of the pet store: actix-web routes over the application's use cases, bearer
//! API keys, the JSON DTOs, and the mapping of every failure to the spec's `Error` body.
//!
//! The server crate builds an [`HttpState`] and serves [`app`] with [`serve`] (actix-web's
//! server with a deadline for every request head and a bound on connections); nothing else is
//! needed.
//!
//! The folders show the design. Each resource owns one, with its handlers, DTOs, parameters, routes
//! and part of the OpenAPI document: `pets`, `orders`, `inventory`, `categories`, `events`, `webhooks`; `service` holds the endpoints
//! about the service itself (health, metrics, the documents and Swagger UI). The cross-cutting jobs
//! have one each: `wire` (the HTTP wire formats: bodies, JSON, query strings, cursors, gzip; the
//! JSON `Error` guard), `security` (API keys, rate limits, CORS, security headers), `observability`
//! (request ids, the request log, metrics), `routing` (paths and route helpers), `openapi` (the
//! document the resources' parts merge into) and `server` (connections: deadlines, bounds). `app`
//! assembles them; `state` is what handlers share, `error` the `Error` body every failure becomes.

mod app;
mod categories;
pub mod error;
mod events;
mod idempotency;
mod inventory;
mod observability;
pub mod openapi;
mod orders;
mod pets;
mod routing;
pub mod security;
mod server;
mod service;
mod state;
mod webhooks;
mod wire;

pub use app::{app, metrics_app, webhook_bodies};
pub use error::{ApiError, ErrorCode};
pub use observability::metrics::{describe_metrics, record_in_flight, MetricsExporter};
pub use routing::paths::{
    BASE_PATH, DOCS_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH, PETS_PATH, PET_PATH,
};
pub use routing::servers::{ApiServers, ServerUrl, ServerUrlError};
pub use security::auth::{ApiKeys, KeyClaims, KeyError, EXP_LEEWAY, NOT_BEFORE_LEEWAY};
pub use security::cors::CorsOrigins;
pub use security::rate_limit::RateLimit;
pub use server::{drain::Connections, serve, ConnectionLimits, ServerSettings};
pub use state::HttpState;
pub use wire::cursor::CursorCodec;
