//! The event feed of a `memory:` store: events kept in commit order beside the state they
//! record, written under the same lock as their change. One lock, so the order events are
//! written in is the order they commit in, and every position is `(0, sequence)`.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use petstore_application::{EventFeed, FeedQuery, FeedRead, FeedReadError, RepositoryError};
use petstore_domain::{
    Event, EventAudience, EventSubject, EventType, FeedEntry, FeedPosition, VisibleOrders,
};

use super::chunked_log::ChunkedLog;
use super::{InMemoryPetRepository, State};
use crate::event_stamp::{count_written, new_event_id, now_ms};

/// The events of one store, oldest first: in position order, so a read finds where it starts
/// by binary search.
#[derive(Debug, Default)]
pub(super) struct EventLog {
    entries: ChunkedLog<FeedEntry>,
    last_sequence: i64,
    /// The position of the last purged event.
    horizon: Option<FeedPosition>,
}

impl EventLog {
    /// Records that `subject` was changed as `event_type` says; the caller holds the store's
    /// lock for the change, so the event and the change are seen together.
    pub(super) fn record(
        &mut self,
        event_type: EventType,
        subject: EventSubject,
    ) -> Result<(), RepositoryError> {
        let event = Event::new(new_event_id()?, event_type, now_ms(), subject)
            .map_err(|error| RepositoryError::Unexpected(Box::new(error)))?;
        self.last_sequence += 1;
        self.entries.push_back(FeedEntry {
            position: FeedPosition::new(0, self.last_sequence),
            event,
        });
        count_written(event_type);
        Ok(())
    }

    fn read(&self, query: &FeedQuery) -> Result<FeedRead, FeedReadError> {
        let after = match query.after {
            Some(after) if self.horizon.is_some_and(|horizon| after < horizon) => {
                return Err(FeedReadError::Gone)
            }
            Some(after) => after,
            None => self.horizon.unwrap_or(FeedPosition::START),
        };
        let entries = self
            .entries
            .after(|entry| entry.position <= after)
            .filter(|entry| query.types.contains(entry.event.event_type()))
            .filter(|entry| match (entry.event.audience(), &query.visible) {
                (EventAudience::Everyone, _) | (_, VisibleOrders::All) => true,
                (EventAudience::Owner(owner), VisibleOrders::PlacedBy(key)) => owner == *key,
                (EventAudience::Staff, VisibleOrders::PlacedBy(_)) => false,
            })
            .take(query.max)
            .cloned()
            .collect();
        Ok(FeedRead { entries, after })
    }

    fn head(&self) -> Option<FeedPosition> {
        self.entries
            .back()
            .map(|newest| newest.position)
            .or(self.horizon)
    }

    fn purge(&mut self, before_ms: i64, max: usize) -> u64 {
        let mut deleted = 0;
        while deleted < max {
            match self.entries.front() {
                Some(oldest) if oldest.event.occurred_at_ms() < before_ms => {
                    self.horizon = Some(oldest.position);
                    self.entries.pop_front();
                    deleted += 1;
                }
                _ => break,
            }
        }
        u64::try_from(deleted).unwrap_or(u64::MAX)
    }
}

/// The feed of one in-memory store.
#[derive(Debug)]
pub struct InMemoryEventFeed {
    state: Arc<Mutex<State>>,
}

impl InMemoryEventFeed {
    /// The feed of `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl EventFeed for InMemoryEventFeed {
    async fn read(&self, query: FeedQuery) -> Result<FeedRead, FeedReadError> {
        self.state().events.read(&query)
    }

    async fn purge(&self, before_ms: i64, max: usize) -> Result<u64, RepositoryError> {
        Ok(self.state().events.purge(before_ms, max))
    }

    async fn held_back_since(&self) -> Result<Option<i64>, RepositoryError> {
        Ok(None)
    }

    async fn head(&self) -> Result<Option<FeedPosition>, RepositoryError> {
        Ok(self.state().events.head())
    }
}
