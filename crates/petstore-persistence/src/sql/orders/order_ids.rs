//! `OrderIds`: where the id of a new order comes from. Random, so that an id tells a key nothing
//! about how many orders others placed (sequential ids would); from 1 to below 2^53, so that it
//! stays exact as a JSON number in JavaScript. A repository draws again when the id is taken.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use petstore_application::RepositoryError;

/// The source of new order ids: random ([`OrderIds::random`]), or given in turn (tests making
/// two orders draw the same id).
#[derive(Clone)]
pub struct OrderIds(Arc<dyn Fn() -> Result<i64, RepositoryError> + Send + Sync>);

impl OrderIds {
    /// Ids are below this: 2^53, past which JavaScript's numbers skip integers.
    pub const LIMIT: i64 = 1 << 53;

    /// How many ids one insert draws before it fails. A draw finds its id taken with a chance
    /// of (orders stored) / 2^53, so even a second draw is rare.
    pub(crate) const DRAWS: usize = 8;

    /// Uniformly random ids from 1 to below 2^53, from the operating system's random source.
    pub fn random() -> Self {
        Self(Arc::new(random_id))
    }

    /// `ids` in turn, then `then` for ever.
    pub fn in_turn(ids: &[i64], then: i64) -> Self {
        let queue = Mutex::new(ids.iter().copied().collect::<VecDeque<_>>());
        Self(Arc::new(move || {
            let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
            Ok(queue.pop_front().unwrap_or(then))
        }))
    }

    pub(crate) fn draw(&self) -> Result<i64, RepositoryError> {
        (self.0)()
    }

    /// The error of an insert whose every draw found its id taken.
    pub(crate) fn exhausted() -> RepositoryError {
        RepositoryError::Unexpected(
            format!("every one of {} order ids drawn was taken", Self::DRAWS).into(),
        )
    }
}

impl Default for OrderIds {
    fn default() -> Self {
        Self::random()
    }
}

impl fmt::Debug for OrderIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OrderIds")
    }
}

fn random_id() -> Result<i64, RepositoryError> {
    loop {
        let bits = getrandom::u64().map_err(|err| {
            RepositoryError::Unexpected(format!("no random order id: {err}").into())
        })?;
        // The top 53 bits; 0 is drawn again (a chance of 2^-53), ids start at 1.
        if let Ok(id @ 1..) = i64::try_from(bits >> 11) {
            return Ok(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_positive_and_below_2_53() {
        let ids = OrderIds::random();
        let drawn: Vec<i64> = (0..1000)
            .map(|_| ids.draw().expect("a random id"))
            .collect();
        assert!(drawn.iter().all(|id| (1..OrderIds::LIMIT).contains(id)));
        // 1000 uniform draws all in the lower half of the range: a chance of 2^-1000.
        assert!(drawn.iter().any(|&id| id >= OrderIds::LIMIT / 2));
    }
}
