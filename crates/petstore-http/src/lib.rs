//! The HTTP adapter of the pet store: actix-web routes over the application's `PetService`,
//! bearer API keys, the JSON DTOs, and the mapping of every failure to the spec's `Error` body.
//!
//! The server crate builds an [`HttpState`] and serves [`app`]; nothing else is needed. The
//! OpenAPI document ([`openapi`]) is generated from this crate's handlers and DTOs.

mod app;
pub mod auth;
mod body;
pub mod cors;
mod cursor;
pub mod dto;
pub mod error;
mod handlers;
pub mod metrics;
mod middleware;
pub mod openapi;
mod params;
pub mod paths;
pub mod rate_limit;
pub mod request_id;
mod state;

pub use app::{app, metrics_app};
pub use auth::{ApiKeys, KeyClaims, KeyError, EXP_LEEWAY, NOT_BEFORE_LEEWAY};
pub use cors::CorsOrigins;
pub use cursor::CursorCodec;
pub use dto::{NewPetDto, PetDto};
pub use error::{ApiError, ErrorCode};
pub use handlers::get_pet::successor_link;
pub use metrics::MetricsExporter;
pub use openapi::{ApiServers, ServerUrl};
pub use paths::{
    BASE_PATH, DOCS_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH, PETS_PATH, PET_PATH,
};
pub use rate_limit::RateLimit;
pub use state::HttpState;
