//! What the order use cases' failures answer: an order or pet that does not exist is a 404, a
//! move the order's life cycle does not allow a 409, storage failures as every resource maps
//! them.

use petstore_application::OrderError;

use crate::error::{ApiError, ErrorCode};

impl From<OrderError> for ApiError {
    fn from(err: OrderError) -> Self {
        match err {
            OrderError::NotFound(_) | OrderError::PetNotFound(_) => {
                Self::not_found(err.to_string())
            }
            OrderError::Conflict(conflict) => Self::new(ErrorCode::Conflict, conflict.to_string()),
            OrderError::Repository(err) => err.into(),
        }
    }
}
