//! Orders: a customer's claim on one pet, and the order's life cycle, which moves the pet through
//! its own (`PetStatus`): placing an order takes an available pet (`available -> pending`),
//! delivering sells it (`pending -> sold`), cancelling gives it back (`pending -> available`).
//! Every move is checked against both life cycles before anything changes; an adapter applies
//! the order's change and the pet's in one transaction.

use std::fmt;

use crate::{Pet, PetId, PetStatus, StatusTransitionError};

/// Identifier of a stored order, assigned by the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderId(i64);

impl OrderId {
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    /// An id as clients write it: plain decimal digits with an optional `-`, within int64.
    pub fn parse(raw: &str) -> Option<Self> {
        crate::decimal::parse_i64(raw).map(Self)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Where an order is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    /// Placed; the pet is reserved (`pending`).
    Placed,
    /// Approved by the store; the pet stays reserved.
    Approved,
    /// Delivered; the pet is `sold`. Final.
    Delivered,
    /// Cancelled; the pet is `available` again. Final.
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be one of `placed`, `approved`, `delivered`, `cancelled`")]
pub struct OrderStatusError;

impl OrderStatus {
    pub const ALL: [OrderStatus; 4] = [
        OrderStatus::Placed,
        OrderStatus::Approved,
        OrderStatus::Delivered,
        OrderStatus::Cancelled,
    ];

    pub fn parse(raw: &str) -> Result<Self, OrderStatusError> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == raw)
            .ok_or(OrderStatusError)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Placed => "placed",
            Self::Approved => "approved",
            Self::Delivered => "delivered",
            Self::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for OrderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What can be done to a placed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderAction {
    Approve,
    Deliver,
    Cancel,
}

impl OrderAction {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Deliver => "deliver",
            Self::Cancel => "cancel",
        }
    }

    /// The order's status after this action, from `from`; `None` when the life cycle has no
    /// such edge.
    const fn next(self, from: OrderStatus) -> Option<OrderStatus> {
        match (from, self) {
            (OrderStatus::Placed, Self::Approve) => Some(OrderStatus::Approved),
            (OrderStatus::Approved, Self::Deliver) => Some(OrderStatus::Delivered),
            (OrderStatus::Placed | OrderStatus::Approved, Self::Cancel) => {
                Some(OrderStatus::Cancelled)
            }
            _ => None,
        }
    }

    /// The ordered pet's status after this action, when it changes.
    const fn pet_status(self) -> Option<PetStatus> {
        match self {
            Self::Approve => None,
            Self::Deliver => Some(PetStatus::Sold),
            Self::Cancel => Some(PetStatus::Available),
        }
    }
}

/// Why an order cannot be placed or moved; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderConflict {
    #[error("pet {pet} is `{status}`: only an `available` pet can be ordered")]
    PetNotAvailable { pet: PetId, status: PetStatus },
    #[error("an order that is `{from}` cannot be {action}d", action = .action.as_str())]
    Order {
        from: OrderStatus,
        action: OrderAction,
    },
    #[error("the ordered pet cannot follow: {0}")]
    Pet(#[from] StatusTransitionError),
}

/// An order as the store keeps it. One order is for one pet, so `quantity` is always 1 (the
/// classic Petstore's field, kept for clients that send or expect it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: OrderId,
    pub pet_id: PetId,
    pub quantity: u32,
    pub status: OrderStatus,
    /// When it was delivered (Unix seconds); `None` until then.
    pub ship_date: Option<i64>,
}

/// An order about to be placed: the pet it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    pub pet_id: PetId,
}

impl NewOrder {
    /// Reserves `pet` for this order (`available -> pending`), or says why it cannot be had.
    pub fn place(self, pet: &mut Pet) -> Result<(), OrderConflict> {
        if pet.status != PetStatus::Available {
            return Err(OrderConflict::PetNotAvailable {
                pet: pet.id,
                status: pet.status,
            });
        }
        pet.change_status(PetStatus::Pending)?;
        Ok(())
    }

    /// The stored order, once the store gave it `id`.
    pub fn into_order(self, id: OrderId) -> Order {
        Order {
            id,
            pet_id: self.pet_id,
            quantity: 1,
            status: OrderStatus::Placed,
            ship_date: None,
        }
    }
}

impl Order {
    /// Whether the order is delivered (the classic Petstore's `complete`).
    pub fn is_complete(&self) -> bool {
        self.status == OrderStatus::Delivered
    }

    /// Applies `action` at `now` (Unix seconds) to this order and its `pet`: both change, or
    /// neither does.
    pub fn apply(
        &mut self,
        action: OrderAction,
        pet: &mut Pet,
        now: i64,
    ) -> Result<(), OrderConflict> {
        let next = action.next(self.status).ok_or(OrderConflict::Order {
            from: self.status,
            action,
        })?;
        let pet_status = match action.pet_status() {
            Some(status) => pet.status.transition_to(status)?,
            None => pet.status,
        };
        pet.status = pet_status;
        self.status = next;
        if next == OrderStatus::Delivered {
            self.ship_date = Some(now);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CategoryId, NewPet, PetName};

    fn pet(status: PetStatus) -> Pet {
        NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(1).unwrap(),
            Some(status),
        )
        .into_pet(PetId::new(7))
    }

    fn placed() -> Order {
        NewOrder {
            pet_id: PetId::new(7),
        }
        .into_order(OrderId::new(1))
    }

    #[test]
    fn placing_takes_an_available_pet_only() {
        let mut rex = pet(PetStatus::Available);
        NewOrder { pet_id: rex.id }.place(&mut rex).unwrap();
        assert_eq!(rex.status, PetStatus::Pending);
        for status in [PetStatus::Pending, PetStatus::Sold] {
            let mut taken = pet(status);
            assert_eq!(
                NewOrder { pet_id: taken.id }.place(&mut taken),
                Err(OrderConflict::PetNotAvailable {
                    pet: taken.id,
                    status
                })
            );
            assert_eq!(taken.status, status, "unchanged");
        }
        let order = placed();
        assert_eq!(
            (order.quantity, order.status, order.ship_date),
            (1, OrderStatus::Placed, None)
        );
    }

    #[test]
    fn delivering_sells_the_pet_and_dates_the_shipment() {
        let (mut order, mut rex) = (placed(), pet(PetStatus::Pending));
        order.apply(OrderAction::Approve, &mut rex, 10).unwrap();
        assert_eq!(
            (order.status, rex.status),
            (OrderStatus::Approved, PetStatus::Pending)
        );
        order.apply(OrderAction::Deliver, &mut rex, 20).unwrap();
        assert_eq!(
            (order.status, rex.status),
            (OrderStatus::Delivered, PetStatus::Sold)
        );
        assert_eq!(order.ship_date, Some(20));
        assert!(order.is_complete());
    }

    #[test]
    fn cancelling_gives_the_pet_back() {
        for approve_first in [false, true] {
            let (mut order, mut rex) = (placed(), pet(PetStatus::Pending));
            if approve_first {
                order.apply(OrderAction::Approve, &mut rex, 1).unwrap();
            }
            order.apply(OrderAction::Cancel, &mut rex, 2).unwrap();
            assert_eq!(
                (order.status, rex.status),
                (OrderStatus::Cancelled, PetStatus::Available)
            );
            assert!(!order.is_complete());
        }
    }

    #[test]
    fn forbidden_moves_change_neither_the_order_nor_the_pet() {
        let cases = [
            (OrderStatus::Placed, OrderAction::Deliver),
            (OrderStatus::Approved, OrderAction::Approve),
            (OrderStatus::Delivered, OrderAction::Cancel),
            (OrderStatus::Delivered, OrderAction::Deliver),
            (OrderStatus::Cancelled, OrderAction::Approve),
            (OrderStatus::Cancelled, OrderAction::Cancel),
        ];
        for (from, action) in cases {
            let mut order = Order {
                status: from,
                ..placed()
            };
            let mut rex = pet(PetStatus::Pending);
            assert_eq!(
                order.apply(action, &mut rex, 5),
                Err(OrderConflict::Order { from, action }),
                "{from} {action:?}"
            );
            assert_eq!((order.status, rex.status), (from, PetStatus::Pending));
        }
        // The pet's life cycle is checked too: a pet sold some other way cannot be delivered.
        let mut order = Order {
            status: OrderStatus::Approved,
            ..placed()
        };
        let mut sold = pet(PetStatus::Sold);
        assert!(matches!(
            order.apply(OrderAction::Deliver, &mut sold, 5),
            Err(OrderConflict::Pet(_))
        ));
        assert_eq!(
            (order.status, sold.status),
            (OrderStatus::Approved, PetStatus::Sold)
        );
    }

    #[test]
    fn statuses_parse_exactly() {
        for status in OrderStatus::ALL {
            assert_eq!(OrderStatus::parse(status.as_str()), Ok(status));
        }
        assert_eq!(OrderStatus::parse("Placed"), Err(OrderStatusError));
        assert_eq!(OrderId::parse("42"), Some(OrderId::new(42)));
        assert_eq!(OrderId::parse("4x"), None);
    }
}
