//! The inventory use case: how many live pets each status has. A count reads every live pet's
//! status, so each instance keeps its last count for at most [`MAX_AGE`] and counts again
//! lazily: the first request to find the count stale counts while the others meanwhile get the
//! count it replaces, and requests before the first count ever wait for it. One count at a time
//! per instance, whatever the number of requests; creates never take turns on a counter.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures_util::lock::Mutex as AsyncMutex;
use petstore_domain::Inventory;

mod ports;

pub use ports::InventoryRepository;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockInventoryRepository;

use crate::clock::Clock;
use crate::storage::RepositoryError;

/// How long a count answers before it is counted again.
pub const MAX_AGE: Duration = Duration::from_secs(1);

/// A count and when it started: what it counted was stored by then.
#[derive(Debug, Clone, Copy)]
struct Counted {
    inventory: Inventory,
    as_of: SystemTime,
}

impl Counted {
    /// Younger than [`MAX_AGE`] at `now`. A count from a time after `now` (the clock was set
    /// back) is not trusted.
    fn fresh_at(&self, now: SystemTime) -> bool {
        now.duration_since(self.as_of)
            .is_ok_and(|age| age < MAX_AGE)
    }
}

/// `getInventory` over whichever repository and clock the composition root chose, with the
/// instance's last count. Clones share the count.
#[derive(Clone)]
pub struct InventoryService {
    repository: Arc<dyn InventoryRepository>,
    clock: Arc<dyn Clock>,
    last: Arc<Mutex<Option<Counted>>>,
    /// Held by the one request counting.
    counting: Arc<AsyncMutex<()>>,
}

impl std::fmt::Debug for InventoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InventoryService").finish_non_exhaustive()
    }
}

impl InventoryService {
    pub fn new(repository: Arc<dyn InventoryRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            repository,
            clock,
            last: Arc::new(Mutex::new(None)),
            counting: Arc::new(AsyncMutex::new(())),
        }
    }

    /// `getInventory`: the live pets in each status, as counted less than [`MAX_AGE`] ago; or,
    /// while another request counts again, the count before (less than [`MAX_AGE`] plus one
    /// count's time old). A failed count is passed on and nothing is kept of it.
    pub async fn inventory(&self) -> Result<Inventory, RepositoryError> {
        let last = self.last();
        if let Some(last) = last.filter(|last| last.fresh_at(self.clock.now())) {
            return Ok(last.inventory);
        }
        let _turn = match last {
            Some(last) => match self.counting.try_lock() {
                Some(turn) => turn,
                None => return Ok(last.inventory),
            },
            None => self.counting.lock().await,
        };
        // Another request may have counted while this one waited for its turn.
        let as_of = self.clock.now();
        if let Some(last) = self.last().filter(|last| last.fresh_at(as_of)) {
            return Ok(last.inventory);
        }
        let inventory = self.repository.count_by_status().await?;
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Counted { inventory, as_of });
        Ok(inventory)
    }

    fn last(&self) -> Option<Counted> {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
