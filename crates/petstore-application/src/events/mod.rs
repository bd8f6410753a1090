//! The event use cases: read the feed of changes in commit order, and purge what is older than
//! the retention.

use std::sync::Arc;
use std::time::Duration;

use petstore_domain::{Caller, EventTypes, FeedEntry, FeedPosition, PageLimit};

mod ports;

#[cfg(any(test, feature = "mocks"))]
pub use ports::MockEventFeed;
pub use ports::{EventFeed, FeedQuery, FeedRead, FeedReadError};

use crate::clock::Clock;
use crate::storage::RepositoryError;

/// How long events are kept unless configured otherwise: 30 days.
pub const DEFAULT_EVENT_RETENTION: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// Why the feed could not be read; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The position is older than the retention: events after it are gone, and the reader
    /// must read the resources again (listPets) and start over.
    #[error("events after this position are no longer kept")]
    Gone,
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

impl From<FeedReadError> for EventError {
    fn from(error: FeedReadError) -> Self {
        match error {
            FeedReadError::Gone => Self::Gone,
            FeedReadError::Repository(error) => Self::Repository(error),
        }
    }
}

/// One page of the feed, and where the next read starts: after its last event, or where this
/// one started when it is empty. A feed has no last page: a reader at its end reads again
/// later from `next`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub events: Vec<FeedEntry>,
    pub next: FeedPosition,
    /// Whether more events follow `next` now.
    pub more: bool,
}

/// What one purge round did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeRound {
    pub deleted: u64,
    /// Whether the round deleted as many as it could: more may be due.
    pub full: bool,
}

/// The event use cases over whichever feed and clock the composition root chose.
#[derive(Clone)]
pub struct EventService {
    feed: Arc<dyn EventFeed>,
    clock: Arc<dyn Clock>,
    retention: Duration,
}

impl std::fmt::Debug for EventService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventService")
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl EventService {
    pub fn new(feed: Arc<dyn EventFeed>, clock: Arc<dyn Clock>, retention: Duration) -> Self {
        Self {
            feed,
            clock,
            retention,
        }
    }

    pub fn retention(&self) -> Duration {
        self.retention
    }

    /// `listEvents`: the events after `after` (from the oldest kept when `None`) of `types`
    /// that `caller` may see, at most `limit`.
    pub async fn list_events(
        &self,
        caller: &Caller,
        after: Option<FeedPosition>,
        types: EventTypes,
        limit: PageLimit,
    ) -> Result<EventPage, EventError> {
        let limit = usize::from(limit.get());
        // One event more than the page tells whether more follow without a second query.
        let FeedRead {
            entries: mut events,
            after: started_after,
        } = self
            .feed
            .read(FeedQuery {
                after,
                types,
                visible: caller.visible(),
                max: limit + 1,
            })
            .await?;
        let more = events.len() > limit;
        events.truncate(limit);
        let next = events.last().map_or(started_after, |entry| entry.position);
        Ok(EventPage { events, next, more })
    }

    /// Deletes at most `max` of the events older than the retention.
    pub async fn purge_round(&self, max: usize) -> Result<PurgeRound, RepositoryError> {
        let deleted = self.feed.purge(self.cutoff_ms(), max).await?;
        Ok(PurgeRound {
            deleted,
            full: usize::try_from(deleted).is_ok_and(|deleted| deleted >= max),
        })
    }

    /// How far the feed lags behind the writes: the age of the oldest event stored but not yet
    /// readable (zero when every stored event can be read).
    pub async fn lag(&self) -> Result<Duration, RepositoryError> {
        let since = self.feed.held_back_since().await?;
        Ok(since.map_or(Duration::ZERO, |since| {
            let now = unix_millis(self.clock.now());
            Duration::from_millis(u64::try_from(now.saturating_sub(since)).unwrap_or(0))
        }))
    }

    /// Events written before this instant (milliseconds since the epoch) are past the
    /// retention.
    fn cutoff_ms(&self) -> i64 {
        let retention = i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        unix_millis(self.clock.now()).saturating_sub(retention)
    }
}

fn unix_millis(time: std::time::SystemTime) -> i64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests;
