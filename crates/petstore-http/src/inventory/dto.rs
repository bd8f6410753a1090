//! The inventory as answered: the Swagger Petstore's map of status to count, with every status.

use petstore_domain::{Inventory, PetStatus};
use serde::Serialize;
use utoipa::ToSchema;

/// How many live pets each status has.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Inventory, description = "How many pets each status has, every status present \
    (0 included); removed pets are in none. Counted at most 1 s ago. Experimental.",
    example = json!({"available": 12, "pending": 3, "sold": 40}))]
pub(crate) struct InventoryDto {
    /// Pets that can be ordered.
    #[schema(minimum = 0)]
    available: u64,
    /// Pets an open order holds.
    #[schema(minimum = 0)]
    pending: u64,
    /// Pets delivered.
    #[schema(minimum = 0)]
    sold: u64,
}

impl From<Inventory> for InventoryDto {
    fn from(inventory: Inventory) -> Self {
        Self {
            available: inventory.count(PetStatus::Available),
            pending: inventory.count(PetStatus::Pending),
            sold: inventory.count(PetStatus::Sold),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_status_is_a_member_by_its_wire_name() {
        let inventory = Inventory::from_counts([(PetStatus::Available, 12), (PetStatus::Sold, 40)]);
        let body = serde_json::to_value(InventoryDto::from(inventory)).unwrap();
        assert_eq!(body, json!({"available": 12, "pending": 0, "sold": 40}));
        for status in PetStatus::ALL {
            assert!(body.get(status.as_str()).is_some(), "{}", status.as_str());
        }
    }
}
