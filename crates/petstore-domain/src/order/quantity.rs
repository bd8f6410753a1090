//! How many pets one order is for: always one (an order claims one pet), a rule clients meet
//! when they send the classic Petstore's `quantity`.

use std::fmt;

/// The quantity of an order. Only 1 exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OrderQuantity(u8);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be 1: an order is for one pet")]
pub struct OrderQuantityError;

impl OrderQuantity {
    pub const ONE: OrderQuantity = OrderQuantity(1);

    pub fn parse(value: i64) -> Result<Self, OrderQuantityError> {
        if value == 1 {
            Ok(Self::ONE)
        } else {
            Err(OrderQuantityError)
        }
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for OrderQuantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_is_a_quantity() {
        assert_eq!(OrderQuantity::parse(1), Ok(OrderQuantity::ONE));
        for value in [0, 2, -1, i64::MAX] {
            assert_eq!(
                OrderQuantity::parse(value),
                Err(OrderQuantityError),
                "{value}"
            );
        }
        assert_eq!(
            OrderQuantityError.to_string(),
            "must be 1: an order is for one pet"
        );
    }
}
