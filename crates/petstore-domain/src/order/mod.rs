//! Orders: a customer's claim on one pet, and the order's life cycle, which moves the pet through
//! its own (`PetStatus`): placing an order takes an available pet (`available -> pending`),
//! delivering sells it (`pending -> sold`), cancelling gives it back (`pending -> available`).
//! Every move is checked against both life cycles before anything changes; an adapter applies
//! the order's change and the pet's in one transaction. An order belongs to the key that placed
//! it (`access`), and a key may have only so many open orders at once (`open_limit`).

mod access;
mod id;
mod listing;
mod open_limit;
mod quantity;
mod status;

pub use access::{Caller, VisibleOrders};
pub use id::OrderId;
pub use listing::{OrderFilter, OrderListQuery};
pub use open_limit::{OpenOrderLimit, OpenOrderLimitError, TooManyOpenOrders};
pub use quantity::{OrderQuantity, OrderQuantityError};
pub use status::{OrderAction, OrderStatus, OrderStatusError};

use crate::{KeyId, Pet, PetId, PetStatus, Price, StatusTransitionError};

/// Why an order cannot be placed or moved; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderConflict {
    #[error("pet {pet} is `{status}`: only an `available` pet can be ordered")]
    PetNotAvailable { pet: PetId, status: PetStatus },
    #[error("an order that is `{from}` cannot be {done}", done = .action.past_participle())]
    Order {
        from: OrderStatus,
        action: OrderAction,
    },
    #[error("the ordered pet cannot follow: {0}")]
    Pet(#[from] StatusTransitionError),
}

/// An order as the store keeps it. One order is for one pet, so its quantity is always 1 (the
/// classic Petstore's field, kept for clients that send or expect it; [`OrderQuantity`]). Its fields change only
/// through [`apply`](Self::apply), so its status moves along the life cycle alone and the ship
/// date is set exactly when it is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    id: OrderId,
    pet_id: PetId,
    quantity: OrderQuantity,
    status: OrderStatus,
    /// When it was delivered (Unix seconds); `None` until then.
    ship_date: Option<i64>,
    /// The key that placed it; `None` for an order placed before orders had owners. Never
    /// shown to clients: a key's id is the key's business.
    placed_by: Option<KeyId>,
    /// The pet's price when the order was placed; `None` for a pet without one.
    price: Option<Price>,
}

/// An order about to be placed: the pet it takes, in the only quantity there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    pet_id: PetId,
    quantity: OrderQuantity,
    /// The pet's price when it was placed, once [`place`](Self::place) took the pet.
    price: Option<Price>,
}

impl NewOrder {
    pub const fn new(pet_id: PetId, quantity: OrderQuantity) -> Self {
        Self {
            pet_id,
            quantity,
            price: None,
        }
    }

    pub const fn pet_id(&self) -> PetId {
        self.pet_id
    }

    /// Reserves `pet` for this order (`available -> pending`), or says why it cannot be had.
    /// The order keeps the pet's price as it is now: a later change of the pet's price does not
    /// change what was ordered.
    pub fn place(&mut self, pet: &mut Pet) -> Result<(), OrderConflict> {
        if pet.status() != PetStatus::Available {
            return Err(OrderConflict::PetNotAvailable {
                pet: pet.id(),
                status: pet.status(),
            });
        }
        pet.change_status(PetStatus::Pending)?;
        self.price = pet.details().price;
        Ok(())
    }

    /// The stored order, once the store gave it `id`, placed by the key `placed_by`.
    pub fn into_order(self, id: OrderId, placed_by: KeyId) -> Order {
        Order {
            id,
            pet_id: self.pet_id,
            quantity: self.quantity,
            status: OrderStatus::Placed,
            ship_date: None,
            placed_by: Some(placed_by),
            price: self.price,
        }
    }

    /// The price the order keeps, once placed.
    pub const fn price(&self) -> Option<Price> {
        self.price
    }
}

impl Order {
    /// An order as storage kept it. For adapters reading back what they stored; everything
    /// else gets its orders from [`NewOrder::into_order`] and [`apply`](Self::apply).
    pub fn restore(
        id: OrderId,
        pet_id: PetId,
        quantity: OrderQuantity,
        status: OrderStatus,
        ship_date: Option<i64>,
        placed_by: Option<KeyId>,
    ) -> Self {
        Self {
            id,
            pet_id,
            quantity,
            status,
            ship_date,
            placed_by,
            price: None,
        }
    }

    /// An order as storage kept it, with the price it was placed at (see
    /// [`restore`](Self::restore)).
    #[must_use]
    pub const fn with_price(mut self, price: Option<Price>) -> Self {
        self.price = price;
        self
    }

    /// The pet's price when the order was placed; `None` for a pet without a price.
    pub const fn price(&self) -> Option<Price> {
        self.price
    }

    pub const fn id(&self) -> OrderId {
        self.id
    }

    pub const fn pet_id(&self) -> PetId {
        self.pet_id
    }

    pub const fn quantity(&self) -> OrderQuantity {
        self.quantity
    }

    pub const fn status(&self) -> OrderStatus {
        self.status
    }

    /// When it was delivered (Unix seconds); `None` until then.
    pub const fn ship_date(&self) -> Option<i64> {
        self.ship_date
    }

    /// The key that placed it; `None` for an order placed before orders had owners.
    pub fn placed_by(&self) -> Option<&KeyId> {
        self.placed_by.as_ref()
    }

    /// Whether it is open: placed and not yet approved (what [`OpenOrderLimit`] counts).
    pub fn is_open(&self) -> bool {
        self.status == OrderStatus::Placed
    }

    /// Whether the order is delivered (the classic Petstore's `complete`).
    pub fn is_complete(&self) -> bool {
        self.status == OrderStatus::Delivered
    }

    /// Refuses `action` when the order's life cycle has no such move from where it is: what
    /// [`apply`](Self::apply) refuses before it looks at the pet.
    pub fn check(&self, action: OrderAction) -> Result<(), OrderConflict> {
        match action.next(self.status) {
            Some(_) => Ok(()),
            None => Err(OrderConflict::Order {
                from: self.status,
                action,
            }),
        }
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
        // The pet's move is the last that can fail, so a refusal leaves both as they were.
        if let Some(pet_status) = action.pet_status() {
            pet.change_status(pet_status)?;
        }
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
        NewOrder::new(PetId::new(7), OrderQuantity::ONE)
            .into_order(OrderId::new(1), KeyId::parse(&"a".repeat(32)).unwrap())
    }

    #[test]
    fn placing_takes_an_available_pet_only() {
        let mut rex = pet(PetStatus::Available);
        NewOrder::new(rex.id(), OrderQuantity::ONE)
            .place(&mut rex)
            .unwrap();
        assert_eq!(rex.status(), PetStatus::Pending);
        for status in [PetStatus::Pending, PetStatus::Sold] {
            let mut taken = pet(status);
            assert_eq!(
                NewOrder::new(taken.id(), OrderQuantity::ONE).place(&mut taken),
                Err(OrderConflict::PetNotAvailable {
                    pet: taken.id(),
                    status
                })
            );
            assert_eq!(taken.status(), status, "unchanged");
        }
        let order = placed();
        assert_eq!(
            (order.quantity().get(), order.status, order.ship_date),
            (1, OrderStatus::Placed, None)
        );
    }

    #[test]
    fn delivering_sells_the_pet_and_dates_the_shipment() {
        let (mut order, mut rex) = (placed(), pet(PetStatus::Pending));
        order.apply(OrderAction::Approve, &mut rex, 10).unwrap();
        assert_eq!(
            (order.status, rex.status()),
            (OrderStatus::Approved, PetStatus::Pending)
        );
        order.apply(OrderAction::Deliver, &mut rex, 20).unwrap();
        assert_eq!(
            (order.status, rex.status()),
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
                (order.status, rex.status()),
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
            assert_eq!((order.status, rex.status()), (from, PetStatus::Pending));
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
            (order.status, sold.status()),
            (OrderStatus::Approved, PetStatus::Sold)
        );
    }

    /// Clients show these messages to their users: each refused move, in plain English.
    #[test]
    fn every_refused_move_says_so_in_plain_english() {
        use OrderAction::{Approve, Cancel, Deliver};
        use OrderStatus::{Approved, Cancelled, Delivered, Placed};
        let expected = [
            (
                Placed,
                Deliver,
                "an order that is `placed` cannot be delivered",
            ),
            (
                Approved,
                Approve,
                "an order that is `approved` cannot be approved",
            ),
            (
                Delivered,
                Approve,
                "an order that is `delivered` cannot be approved",
            ),
            (
                Delivered,
                Deliver,
                "an order that is `delivered` cannot be delivered",
            ),
            (
                Delivered,
                Cancel,
                "an order that is `delivered` cannot be cancelled",
            ),
            (
                Cancelled,
                Approve,
                "an order that is `cancelled` cannot be approved",
            ),
            (
                Cancelled,
                Deliver,
                "an order that is `cancelled` cannot be delivered",
            ),
            (
                Cancelled,
                Cancel,
                "an order that is `cancelled` cannot be cancelled",
            ),
        ];
        let mut refused = Vec::new();
        for from in OrderStatus::ALL {
            for action in [Approve, Deliver, Cancel] {
                let mut order = Order {
                    status: from,
                    ..placed()
                };
                if let Err(conflict) = order.apply(action, &mut pet(PetStatus::Pending), 5) {
                    refused.push((from, action, conflict.to_string()));
                }
            }
        }
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(from, action, message)| (from, action, message.to_owned()))
            .collect();
        assert_eq!(refused, expected);
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
