//! What the pets' use case failures answer: a pet that does not exist is a 404, getPet after
//! its sunset a 410 that names the replacement, a change on a stale version 412, a change the
//! pet's rules refuse 409, storage failures as every resource maps them.

use petstore_application::{GetPetError, PetWriteError};

use crate::error::{ApiError, ErrorCode};
use crate::routing::paths::{PETS_PATH, PET_PATH};

impl From<GetPetError> for ApiError {
    fn from(err: GetPetError) -> Self {
        match err {
            GetPetError::NotFound(id) => Self::not_found(format!("no pet has the id {id}")),
            GetPetError::Gone { sunset } => Self::new(
                ErrorCode::Gone,
                format!(
                    "`GET {PET_PATH}` was removed on {}; use `GET {PETS_PATH}` instead",
                    httpdate::fmt_http_date(sunset)
                ),
            ),
            GetPetError::Repository(err) => err.into(),
        }
    }
}

impl From<PetWriteError> for ApiError {
    fn from(err: PetWriteError) -> Self {
        match err {
            PetWriteError::NotFound(id) => Self::not_found(format!("no pet has the id {id}")),
            PetWriteError::Stale { .. } => Self::new(
                ErrorCode::PreconditionFailed,
                "the pet has changed since the `If-Match` tag was read: read it again, and \
                 send the change with its new `ETag`",
            ),
            PetWriteError::Change(refusal) => Self::new(ErrorCode::Conflict, refusal.to_string()),
            PetWriteError::Removal(refusal) => Self::new(ErrorCode::Conflict, refusal.to_string()),
            PetWriteError::Repository(err) => err.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_names_the_sunset_and_the_replacement() {
        let err = ApiError::from(GetPetError::Gone {
            sunset: petstore_application::deprecation::get_pet_sunset(),
        });
        assert_eq!(err.code(), ErrorCode::Gone);
        assert!(err.message().contains("Thu, 05 Dec 2030 00:00:00 GMT"));
        assert!(err.message().contains("GET /v1/pets"));
    }
}
