//! The HTTP adapter of the pet store: actix-web routes over the application's use cases, bearer
//! API keys, the JSON DTOs, and the mapping of every failure to the spec's `Error` body.
//!
//! The server crate builds an [`HttpState`] and serves [`app`] with [`serve`] (actix-web's
//! server with a deadline for every request head and a bound on connections); nothing else is
//! needed.
//!
//! Each resource owns a module with its handlers, DTOs, parameters, routes and part of the
//! OpenAPI document: `pets`, `orders`; `service` holds the endpoints about the service itself
//! (health, metrics, the documents and Swagger UI). What they share sits beside them: the key
//! check every `/v1` handler declares (`state::Authorized`), body and query reading (`body`,
//! `json`, `query`), cursors, errors, routing helpers and the middleware. The
//! [`openapi`] module merges the resources' parts into one document.

mod app;
pub mod auth;
mod body;
mod common_responses;
pub mod cors;
mod cursor;
pub mod error;
mod head_deadline;
mod json;
pub mod metrics;
mod middleware;
pub mod openapi;
mod orders;
pub mod paths;
mod pets;
mod query;
pub mod rate_limit;
pub mod request_id;
mod routing;
mod server;
mod servers;
mod service;
mod state;

#[cfg(test)]
mod module_graph;

pub use app::{app, metrics_app};
pub use auth::{ApiKeys, KeyClaims, KeyError, EXP_LEEWAY, NOT_BEFORE_LEEWAY};
pub use cors::CorsOrigins;
pub use cursor::CursorCodec;
pub use error::{ApiError, ErrorCode};
pub use metrics::MetricsExporter;
pub use paths::{
    BASE_PATH, DOCS_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH, PETS_PATH, PET_PATH,
};
pub use rate_limit::RateLimit;
pub use server::{serve, ConnectionLimits, ServerSettings};
pub use servers::{ApiServers, ServerUrl, ServerUrlError};
pub use state::HttpState;
