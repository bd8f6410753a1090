//! What the order use cases' failures answer: an order or pet that does not exist (or an order
//! the key may not see) is a 404, a scope that does not allow the action the 403 every scope
//! refusal is, a move the order's life cycle does not allow a 409 `conflict`, a key at its bound
//! of open orders a 409 `too_many_open_orders`, storage failures as every resource maps them.

use petstore_application::OrderError;

use crate::error::{ApiError, ErrorCode};
use crate::security::auth::insufficient_scope;

impl From<OrderError> for ApiError {
    fn from(err: OrderError) -> Self {
        match err {
            OrderError::NotFound(_) | OrderError::PetNotFound(_) => {
                Self::not_found(err.to_string())
            }
            OrderError::Forbidden { needed } => insufficient_scope(needed),
            OrderError::Conflict(conflict) => Self::new(ErrorCode::Conflict, conflict.to_string()),
            OrderError::TooManyOpenOrders(refusal) => {
                Self::new(ErrorCode::TooManyOpenOrders, refusal.to_string())
            }
            OrderError::Repository(err) => err.into(),
        }
    }
}
