//! Removing a pet from the catalogue: allowed unless an order holds it, so no placed or
//! approved order is left for a pet the store no longer has. Removal keeps the pet's record
//! (its orders still name it); how that is stored is the adapters' business.

use super::{Pet, PetId};
use crate::OrderId;

/// Why a pet cannot be removed; it was not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PetRemovalError {
    /// An order (placed or approved) holds the pet: it must be delivered or cancelled first,
    /// or a customer would be left waiting for a pet that is gone.
    #[error(
        "pet {pet} is held by order {order}: deliver or cancel the order before removing the pet"
    )]
    HeldByOrder { pet: PetId, order: OrderId },
}

impl Pet {
    /// Whether the pet may be removed. `holding_order` is the order that holds it (one `placed`
    /// or `approved`; see [`OrderStatus::holds_its_pet`](crate::OrderStatus::holds_its_pet)),
    /// if any. A pet in any status may go otherwise, a sold one included.
    pub fn check_removal(&self, holding_order: Option<OrderId>) -> Result<(), PetRemovalError> {
        match holding_order {
            Some(order) => Err(PetRemovalError::HeldByOrder {
                pet: self.id,
                order,
            }),
            None => Ok(()),
        }
    }

    /// Removes the pet, unless an order holds it ([`check_removal`](Self::check_removal)): its
    /// version moves on, so the removal is a change like any other (its last state, as an
    /// event or an export would carry it).
    pub fn remove(&mut self, holding_order: Option<OrderId>) -> Result<(), PetRemovalError> {
        self.check_removal(holding_order)?;
        self.version = self.version.next();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CategoryId, NewPet, PetName, PetStatus};

    fn pet(status: PetStatus) -> Pet {
        NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(3).unwrap(),
            Some(status),
        )
        .into_pet(PetId::new(7))
    }

    #[test]
    fn a_pet_no_order_holds_may_go_whatever_its_status() {
        for status in PetStatus::ALL {
            assert_eq!(pet(status).check_removal(None), Ok(()), "{status}");
        }
    }

    #[test]
    fn a_held_pet_may_not_go_and_the_refusal_names_the_order() {
        let err = pet(PetStatus::Pending)
            .check_removal(Some(OrderId::new(12)))
            .unwrap_err();
        assert_eq!(
            err,
            PetRemovalError::HeldByOrder {
                pet: PetId::new(7),
                order: OrderId::new(12)
            }
        );
        assert_eq!(
            err.to_string(),
            "pet 7 is held by order 12: deliver or cancel the order before removing the pet"
        );
    }
}
