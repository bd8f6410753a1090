//! What a write that may store an idempotency record came to, as the adapters' write paths
//! (group commit, order transactions) hand it back: the same write serves requests with and
//! without a key, and each port method takes the part it promises.

use petstore_application::{IdempotencyRecord, Recorded, RepositoryError, StoredResponse};

use crate::sql::engine::errors::Detail;

#[derive(Debug)]
pub(crate) enum Written<T> {
    /// Carried out; with the response stored in its record when it was planned with one.
    Stored(T, Option<StoredResponse>),
    /// Not carried out: a record for its key was stored first.
    Earlier(IdempotencyRecord),
}

impl<T> Written<T> {
    /// The result of a write that had no record to store.
    pub(crate) fn into_unrecorded(self) -> Result<T, RepositoryError> {
        match self {
            Self::Stored(result, _) => Ok(result),
            Self::Earlier(_) => Err(unexpected("a record came back for a write without one")),
        }
    }

    /// What a write planned with a record came to.
    pub(crate) fn into_recorded(self) -> Result<Recorded<T>, RepositoryError> {
        match self {
            Self::Stored(result, Some(response)) => Ok(Recorded::Done(result, response)),
            Self::Earlier(record) => Ok(Recorded::Earlier(record)),
            Self::Stored(_, None) => {
                Err(unexpected("a planned write came back without its record"))
            }
        }
    }
}

fn unexpected(what: &str) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(Detail(what.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response() -> StoredResponse {
        StoredResponse {
            status: 201,
            headers: vec![("location".to_owned(), "/v1/pets/1".to_owned())],
            body: b"{}".to_vec(),
        }
    }

    #[test]
    fn a_planned_write_gives_the_response_stored_in_its_record() {
        let recorded = Written::Stored(7, Some(response())).into_recorded();
        assert!(
            matches!(&recorded, Ok(Recorded::Done(7, stored)) if *stored == response()),
            "{recorded:?}"
        );
    }

    #[test]
    fn a_planned_write_without_its_record_is_a_failure_not_an_answer() {
        assert!(Written::Stored(7, None).into_recorded().is_err());
    }

    #[test]
    fn a_write_without_a_plan_is_never_answered_from_a_record() {
        assert_eq!(Written::Stored(7, None).into_unrecorded().ok(), Some(7));
        let record = IdempotencyRecord {
            owner: petstore_domain::KeyId::parse(&"a".repeat(32)).expect("a valid key id"),
            key: petstore_domain::IdempotencyKey::parse("a").expect("a valid key"),
            fingerprint: petstore_application::Fingerprint([0; 32]),
            response: response(),
            stored_at: 0,
        };
        assert!(Written::<i32>::Earlier(record).into_unrecorded().is_err());
    }
}
