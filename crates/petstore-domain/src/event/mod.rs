//! Events: what changed in the store, one per change, in the order the changes were committed.
//! An event names its type and carries the resource as it was after the change; storage gives
//! each one its place in the feed ([`FeedPosition`]) as it commits the change.

mod id;
mod kind;

pub use id::{EventId, EventIdError};
pub use kind::{EventType, EventTypeError, EventTypes};

use crate::{Category, KeyId, Order, Pet};

/// The version of the payload's shape. A change to what an event carries that an existing
/// reader could misread comes with a new version.
pub const EVENT_PAYLOAD_VERSION: u32 = 1;

/// The resource an event is about, as it was after the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSubject {
    Pet(Pet),
    Order(Order),
    Category(Category),
}

/// One change, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    id: EventId,
    event_type: EventType,
    /// Milliseconds since the Unix epoch, when the change was written.
    occurred_at_ms: i64,
    subject: EventSubject,
}

/// Why an event cannot be made of these parts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a `{event_type}` event cannot carry {carried}")]
pub struct EventSubjectError {
    event_type: EventType,
    carried: &'static str,
}

impl Event {
    /// An event of `event_type` about `subject`, which must be the resource the type names.
    pub fn new(
        id: EventId,
        event_type: EventType,
        occurred_at_ms: i64,
        subject: EventSubject,
    ) -> Result<Self, EventSubjectError> {
        let (resource, carried) = match &subject {
            EventSubject::Pet(_) => ("pet", "a pet"),
            EventSubject::Order(_) => ("order", "an order"),
            EventSubject::Category(_) => ("category", "a category"),
        };
        if event_type.resource() != resource {
            return Err(EventSubjectError {
                event_type,
                carried,
            });
        }
        Ok(Self {
            id,
            event_type,
            occurred_at_ms,
            subject,
        })
    }

    pub fn id(&self) -> &EventId {
        &self.id
    }

    pub fn event_type(&self) -> EventType {
        self.event_type
    }

    pub fn occurred_at_ms(&self) -> i64 {
        self.occurred_at_ms
    }

    pub fn subject(&self) -> &EventSubject {
        &self.subject
    }

    /// Who may read it, beyond the store's staff who read every event: everyone for a pet or
    /// a category; only the key that placed it for an order (nobody else for an order placed
    /// before orders had owners).
    pub fn audience(&self) -> EventAudience {
        match &self.subject {
            EventSubject::Order(order) => match order.placed_by() {
                Some(key) => EventAudience::Owner(key.clone()),
                None => EventAudience::Staff,
            },
            EventSubject::Pet(_) | EventSubject::Category(_) => EventAudience::Everyone,
        }
    }
}

/// Who may read an event ([`Event::audience`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventAudience {
    Everyone,
    /// The key that placed the order, and the staff.
    Owner(KeyId),
    /// The staff only.
    Staff,
}

/// An event's place in the feed: events are read in ascending order of it. Storage decides
/// its parts (`commit` orders the committing transactions, `sequence` the events of one, or
/// all of them where one writer commits in turn); [`FeedPosition::START`] is before every
/// event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedPosition {
    pub commit: i64,
    pub sequence: i64,
}

impl FeedPosition {
    /// Before every event.
    pub const START: Self = Self {
        commit: i64::MIN,
        sequence: i64::MIN,
    };

    pub const fn new(commit: i64, sequence: i64) -> Self {
        Self { commit, sequence }
    }
}

/// An event with its place in the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedEntry {
    pub position: FeedPosition,
    pub event: Event,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{CategoryId, CategoryName, PetId, PetName, PetStatus, PetVersion};

    fn pet() -> Pet {
        Pet::restore(
            PetId::new(1),
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(1).unwrap(),
            PetStatus::Available,
            PetVersion::parse(1).unwrap(),
        )
    }

    #[test]
    fn an_event_carries_only_the_resource_its_type_names() {
        let id = || EventId::from_random([7; 16]);
        assert!(Event::new(id(), EventType::PetCreated, 1, EventSubject::Pet(pet())).is_ok());
        let category = Category::new(
            CategoryId::parse(2).unwrap(),
            CategoryName::parse("Dogs").unwrap(),
        );
        let refused = Event::new(
            id(),
            EventType::PetUpdated,
            1,
            EventSubject::Category(category.clone()),
        )
        .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "a `pet.updated` event cannot carry a category"
        );
        assert!(Event::new(
            id(),
            EventType::CategoryRemoved,
            1,
            EventSubject::Category(category)
        )
        .is_ok());
    }

    #[test]
    fn pet_events_are_for_everyone() {
        let event = Event::new(
            EventId::from_random([1; 16]),
            EventType::PetRemoved,
            5,
            EventSubject::Pet(pet()),
        )
        .unwrap();
        assert_eq!(event.audience(), EventAudience::Everyone);
    }

    #[test]
    fn positions_order_by_commit_then_sequence() {
        let positions = [
            FeedPosition::new(2, 1),
            FeedPosition::START,
            FeedPosition::new(1, 9),
            FeedPosition::new(2, 0),
        ];
        let mut sorted = positions;
        sorted.sort();
        assert_eq!(
            sorted,
            [
                FeedPosition::START,
                FeedPosition::new(1, 9),
                FeedPosition::new(2, 0),
                FeedPosition::new(2, 1)
            ]
        );
    }
}
