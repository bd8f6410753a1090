//! `Inventory`: how many live pets each status has, every status present (0 included), as the
//! store's stock count shows it.

use crate::pet::PetStatus;

/// The number of live pets in each status. Removed pets are in none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inventory {
    available: u64,
    pending: u64,
    sold: u64,
}

impl Inventory {
    /// The inventory of `counts`, each a status and a number of pets in it: a status named
    /// more than once adds up, a status never named has 0.
    pub fn from_counts(counts: impl IntoIterator<Item = (PetStatus, u64)>) -> Self {
        let mut inventory = Self::default();
        for (status, count) in counts {
            let slot = inventory.slot(status);
            *slot = slot.saturating_add(count);
        }
        inventory
    }

    /// How many live pets have `status`.
    pub const fn count(&self, status: PetStatus) -> u64 {
        match status {
            PetStatus::Available => self.available,
            PetStatus::Pending => self.pending,
            PetStatus::Sold => self.sold,
        }
    }

    /// Every status with its count, in [`PetStatus::ALL`]'s order.
    pub fn counts(&self) -> impl Iterator<Item = (PetStatus, u64)> + '_ {
        PetStatus::ALL
            .into_iter()
            .map(|status| (status, self.count(status)))
    }

    fn slot(&mut self, status: PetStatus) -> &mut u64 {
        match status {
            PetStatus::Available => &mut self.available,
            PetStatus::Pending => &mut self.pending,
            PetStatus::Sold => &mut self.sold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_is_present_with_zero_when_no_pet_has_it() {
        let inventory = Inventory::from_counts([(PetStatus::Pending, 3)]);
        assert_eq!(
            inventory.counts().collect::<Vec<_>>(),
            [
                (PetStatus::Available, 0),
                (PetStatus::Pending, 3),
                (PetStatus::Sold, 0)
            ]
        );
        assert_eq!(
            Inventory::from_counts([])
                .counts()
                .map(|(_, n)| n)
                .sum::<u64>(),
            0
        );
    }

    #[test]
    fn a_status_named_more_than_once_adds_up() {
        let inventory = Inventory::from_counts([
            (PetStatus::Sold, 1),
            (PetStatus::Available, 12),
            (PetStatus::Sold, 1),
            (PetStatus::Sold, 38),
        ]);
        assert_eq!(inventory.count(PetStatus::Available), 12);
        assert_eq!(inventory.count(PetStatus::Pending), 0);
        assert_eq!(inventory.count(PetStatus::Sold), 40);
    }

    #[test]
    fn counts_never_overflow() {
        let inventory = Inventory::from_counts([(PetStatus::Sold, u64::MAX), (PetStatus::Sold, 1)]);
        assert_eq!(inventory.count(PetStatus::Sold), u64::MAX);
    }
}
