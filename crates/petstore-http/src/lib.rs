//! The HTTP adapter of the pet store: actix-web routes over the application's `PetService`,
//! bearer API keys, the JSON DTOs, and the mapping of every failure to the spec's `Error` body.
//!
//! The server crate builds an [`HttpState`] and serves [`app`]; nothing else is needed.

mod app;
pub mod auth;
mod body;
pub mod dto;
pub mod error;
mod extractors;
mod handlers;
mod middleware;
mod params;
mod state;

pub use app::app;
pub use auth::{ApiKeys, KeyClaims, KeyError, EXP_LEEWAY};
pub use dto::{NewPetDto, PetDto};
pub use error::{ApiError, ErrorCode};
pub use handlers::get_pet::GET_PET_SUCCESSOR_LINK;
pub use state::HttpState;
