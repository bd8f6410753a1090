//! An order's life cycle: its statuses, the actions that move it, and what each action does to
//! the ordered pet.
//!
//! ```text
//! placed ──approve──► approved ──deliver──► delivered (final; the pet is sold)
//!    │                   │
//!    └─────cancel────────┴──► cancelled (final; the pet is available again)
//! ```

use std::fmt;

use crate::{KeyScope, PetStatus};

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

    /// Whether an order in this status holds its pet: from placing until it is delivered or
    /// cancelled, only the order moves the pet's status, and the pet cannot be removed.
    /// Wider than [`Order::is_open`](crate::Order::is_open), which counts a key's orders
    /// awaiting approval.
    pub const fn holds_its_pet(self) -> bool {
        matches!(self, Self::Placed | Self::Approved)
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

    /// The action's past participle, for messages ("cannot be cancelled"): written out, since
    /// no suffix makes all three (`cancelled` doubles its `l`, as the status does).
    pub const fn past_participle(self) -> &'static str {
        match self {
            Self::Approve => "approved",
            Self::Deliver => "delivered",
            Self::Cancel => "cancelled",
        }
    }

    /// The scope a key needs for this action: approving and delivering are the store's staff's
    /// (`store`); a customer (`write`) may cancel an order of its own.
    pub const fn scope_needed(self) -> KeyScope {
        match self {
            Self::Approve | Self::Deliver => KeyScope::Store,
            Self::Cancel => KeyScope::Write,
        }
    }

    /// The order's status after this action, from `from`; `None` when the life cycle has no
    /// such edge.
    pub(crate) const fn next(self, from: OrderStatus) -> Option<OrderStatus> {
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
    pub(crate) const fn pet_status(self) -> Option<PetStatus> {
        match self {
            Self::Approve => None,
            Self::Deliver => Some(PetStatus::Sold),
            Self::Cancel => Some(PetStatus::Available),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placed_and_approved_orders_hold_their_pet_and_final_ones_let_it_go() {
        let holding: Vec<OrderStatus> = OrderStatus::ALL
            .into_iter()
            .filter(|status| status.holds_its_pet())
            .collect();
        assert_eq!(holding, [OrderStatus::Placed, OrderStatus::Approved]);
    }
}
