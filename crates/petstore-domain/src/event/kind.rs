//! What an event says happened ([`EventType`]), and a set of types to read ([`EventTypes`]).

use std::fmt;

use crate::OrderStatus;

/// What happened: the resource, then what happened to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    PetCreated,
    PetUpdated,
    PetRemoved,
    OrderPlaced,
    OrderApproved,
    OrderDelivered,
    OrderCancelled,
    CategoryCreated,
    CategoryUpdated,
    CategoryRemoved,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an event type; the types are {}", EventType::ALL.map(EventType::as_str).join(", "))]
pub struct EventTypeError;

impl EventType {
    /// Every type, in the order of the documentation. New types go at the end: a set of
    /// types is kept as bits in this order ([`EventTypes::bits`]).
    pub const ALL: [EventType; 10] = [
        Self::PetCreated,
        Self::PetUpdated,
        Self::PetRemoved,
        Self::OrderPlaced,
        Self::OrderApproved,
        Self::OrderDelivered,
        Self::OrderCancelled,
        Self::CategoryCreated,
        Self::CategoryUpdated,
        Self::CategoryRemoved,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PetCreated => "pet.created",
            Self::PetUpdated => "pet.updated",
            Self::PetRemoved => "pet.removed",
            Self::OrderPlaced => "order.placed",
            Self::OrderApproved => "order.approved",
            Self::OrderDelivered => "order.delivered",
            Self::OrderCancelled => "order.cancelled",
            Self::CategoryCreated => "category.created",
            Self::CategoryUpdated => "category.updated",
            Self::CategoryRemoved => "category.removed",
        }
    }

    pub fn parse(raw: &str) -> Result<Self, EventTypeError> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == raw)
            .ok_or(EventTypeError)
    }

    /// The resource it is about: `pet`, `order` or `category`.
    pub fn resource(self) -> &'static str {
        self.as_str()
            .split_once('.')
            .map_or("", |(resource, _)| resource)
    }

    /// The event of an order reaching `status`.
    pub const fn of_order(status: OrderStatus) -> Self {
        match status {
            OrderStatus::Placed => Self::OrderPlaced,
            OrderStatus::Approved => Self::OrderApproved,
            OrderStatus::Delivered => Self::OrderDelivered,
            OrderStatus::Cancelled => Self::OrderCancelled,
        }
    }

    const fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The types a reader asks for: every type, or some.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventTypes(u16);

impl EventTypes {
    pub const EVERY: Self = Self((1 << EventType::ALL.len()) - 1);

    /// The types named in `raw`, separated by commas (`pet.created,order.placed`); a name
    /// ending in `.*` names every type of that resource (`order.*`). Empty names are refused,
    /// as is a list naming nothing.
    pub fn parse_list(raw: &str) -> Result<Self, EventTypeError> {
        let mut bits = 0;
        for name in raw.split(',') {
            bits |= match name.strip_suffix(".*") {
                Some(resource) => {
                    let of_resource = EventType::ALL
                        .into_iter()
                        .filter(|kind| kind.resource() == resource)
                        .fold(0, |bits, kind| bits | kind.bit());
                    if of_resource == 0 {
                        return Err(EventTypeError);
                    }
                    of_resource
                }
                None => EventType::parse(name)?.bit(),
            };
        }
        Ok(Self(bits))
    }

    pub fn contains(self, kind: EventType) -> bool {
        self.0 & kind.bit() != 0
    }

    pub fn is_every(self) -> bool {
        self == Self::EVERY
    }

    /// The types in [`EventType::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = EventType> {
        EventType::ALL
            .into_iter()
            .filter(move |kind| self.contains(kind.to_owned()))
    }

    /// The set as bits in [`EventType::ALL`]'s order: stable while types are only added.
    pub fn bits(self) -> u16 {
        self.0
    }

    /// The set stored as [`bits`](Self::bits); bits of types this build does not know are
    /// dropped, and a set left empty is `None`.
    pub fn from_bits(bits: u16) -> Option<Self> {
        let known = bits & Self::EVERY.0;
        (known != 0).then_some(Self(known))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_type_parses_back_from_its_name() {
        for kind in EventType::ALL {
            assert_eq!(EventType::parse(kind.as_str()), Ok(kind));
        }
        assert_eq!(EventType::parse("pet.sold"), Err(EventTypeError));
        assert_eq!(EventType::OrderCancelled.resource(), "order");
    }

    #[test]
    fn an_order_status_names_its_event() {
        assert_eq!(
            EventType::of_order(OrderStatus::Delivered),
            EventType::OrderDelivered
        );
        assert_eq!(
            EventType::of_order(OrderStatus::Placed),
            EventType::OrderPlaced
        );
    }

    #[test]
    fn a_list_names_types_and_whole_resources() {
        let types = EventTypes::parse_list("pet.created,order.*").unwrap();
        assert_eq!(
            types.iter().collect::<Vec<_>>(),
            [
                EventType::PetCreated,
                EventType::OrderPlaced,
                EventType::OrderApproved,
                EventType::OrderDelivered,
                EventType::OrderCancelled
            ]
        );
        assert!(!types.is_every());
        let all = EventTypes::parse_list("pet.*,order.*,category.*").unwrap();
        assert!(all.is_every());
    }

    #[test]
    fn a_set_is_stored_as_bits() {
        let types = EventTypes::parse_list("pet.*,category.removed").unwrap();
        assert_eq!(EventTypes::from_bits(types.bits()), Some(types));
        assert_eq!(EventTypes::from_bits(0), None);
        assert_eq!(EventTypes::from_bits(u16::MAX), Some(EventTypes::EVERY));
    }

    #[test]
    fn a_bad_list_is_refused() {
        for raw in [
            "",
            "pet.created,",
            "pet",
            "shop.*",
            "Pet.created",
            " pet.created",
        ] {
            assert_eq!(EventTypes::parse_list(raw), Err(EventTypeError), "{raw:?}");
        }
    }
}
