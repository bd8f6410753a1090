//! One module per group of operations. Every `/v1` handler starts with [`authorize`], so the
//! caller is known before anything about the request (path, query, body) is looked at.

pub(crate) mod docs;
pub(crate) mod fallback;
pub(crate) mod get_pet;
pub(crate) mod health;
pub(crate) mod pets;

use actix_web::{HttpMessage, HttpRequest};
use petstore_domain::KeyScope;

use crate::auth::authenticate;
use crate::error::ApiError;
use crate::state::HttpState;

/// Authenticates the request, checks that the key's scope allows `needed`, and keeps the key's
/// claims in its extensions, where the request log picks up the key's name.
fn authorize(req: &HttpRequest, state: &HttpState, needed: KeyScope) -> Result<(), ApiError> {
    let claims = authenticate(req, state.keys(), state.key_directory(), needed)?;
    req.extensions_mut().insert(claims);
    Ok(())
}
