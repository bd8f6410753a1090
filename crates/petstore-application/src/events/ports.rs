//! What the event use cases need of storage: the feed, read in order, and its purge. Events
//! are written by the storage adapters themselves, each in the transaction of the change it
//! records, so no port method writes one.

use async_trait::async_trait;
use petstore_domain::{EventTypes, FeedEntry, FeedPosition, VisibleOrders};

use crate::storage::RepositoryError;

/// A read of the feed: the events after `after` (from the oldest kept when `None`) of `types`
/// that `visible` may see (every pet and category event; the order events of the orders it may
/// see), at most `max`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedQuery {
    pub after: Option<FeedPosition>,
    pub types: EventTypes,
    pub visible: VisibleOrders,
    pub max: usize,
}

/// What a read found: the events, and the position the read started after (the query's, or
/// without one, where the feed's oldest kept event follows: before it, or after the last
/// purged one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedRead {
    pub entries: Vec<FeedEntry>,
    pub after: FeedPosition,
}

/// Why the feed cannot be read from a position.
#[derive(Debug, thiserror::Error)]
pub enum FeedReadError {
    /// Events after the position were purged: reading on would skip them.
    #[error("events after this position are no longer kept")]
    Gone,
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

/// The event feed. Every change a repository commits writes its events in the same
/// transaction, so a change and its events are stored together or not at all.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EventFeed: Send + Sync + 'static {
    /// The events of `query` in ascending position. Positions only grow in the order readers
    /// see them: an event a read returns is never later preceded by one it did not return
    /// (across instances too). `Gone` when an event after `query.after` was purged (never
    /// without a position: the read starts at the oldest event kept).
    async fn read(&self, query: FeedQuery) -> Result<FeedRead, FeedReadError>;

    /// Deletes at most `max` of the oldest events, those written before `before_ms`
    /// (milliseconds since the epoch); how many it deleted. Readers positioned before a
    /// deleted event are `Gone` from then on.
    async fn purge(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError>;

    /// When the oldest event stored but not yet readable was written (milliseconds since the
    /// epoch): what the feed lags behind the writes. `None` when every stored event can be
    /// read.
    async fn held_back_since(&self) -> Result<Option<i64>, RepositoryError>;

    /// The position of the newest event a read can return now (once every event was purged,
    /// the last purged one's); `None` when none.
    async fn head(&self) -> Result<Option<FeedPosition>, RepositoryError>;
}
