//! `PetStatus` and its life cycle.
//!
//! ```text
//! available ──► pending ──► sold (final)
//!     ▲            │
//!     └────────────┘
//! ```
//! A new pet starts `available` unless its creator says otherwise.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PetStatus {
    #[default]
    Available,
    Pending,
    Sold,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be one of `available`, `pending`, `sold`")]
pub struct PetStatusError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a pet cannot go from `{from}` to `{to}`")]
pub struct StatusTransitionError {
    pub from: PetStatus,
    pub to: PetStatus,
}

impl PetStatus {
    pub const ALL: [PetStatus; 3] = [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    /// Parses the wire spelling exactly: statuses are identifiers, so `SOLD` or ` sold` are
    /// mistakes worth reporting rather than guessing at.
    pub fn parse(raw: &str) -> Result<Self, PetStatusError> {
        match raw {
            "available" => Ok(Self::Available),
            "pending" => Ok(Self::Pending),
            "sold" => Ok(Self::Sold),
            _ => Err(PetStatusError),
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Available => "available",
            Self::Pending => "pending",
            Self::Sold => "sold",
        }
    }

    /// Whether `self -> next` is one of the life cycle's edges. Staying put is not a transition.
    pub const fn can_transition_to(self, next: PetStatus) -> bool {
        matches!(
            (self, next),
            (Self::Available, Self::Pending)
                | (Self::Pending, Self::Sold)
                | (Self::Pending, Self::Available)
        )
    }

    pub fn transition_to(self, next: PetStatus) -> Result<PetStatus, StatusTransitionError> {
        if self.can_transition_to(next) {
            Ok(next)
        } else {
            Err(StatusTransitionError {
                from: self,
                to: next,
            })
        }
    }

    pub const fn is_final(self) -> bool {
        matches!(self, Self::Sold)
    }
}

impl FromStr for PetStatus {
    type Err = PetStatusError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for PetStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::PetStatus::{Available, Pending, Sold};
    use super::*;

    #[test]
    fn default_is_available() {
        assert_eq!(PetStatus::default(), Available);
    }

    #[test]
    fn parses_each_wire_value_and_round_trips() {
        for status in PetStatus::ALL {
            assert_eq!(PetStatus::parse(status.as_str()), Ok(status));
            assert_eq!(status.to_string().parse::<PetStatus>(), Ok(status));
        }
    }

    #[test]
    fn rejects_other_spellings() {
        for raw in ["", "SOLD", "Sold", " sold", "sold ", "adopted", "availabl"] {
            assert_eq!(PetStatus::parse(raw), Err(PetStatusError), "{raw:?}");
        }
    }

    #[test]
    fn allowed_transitions_are_exactly_the_life_cycle_edges() {
        let allowed = [(Available, Pending), (Pending, Sold), (Pending, Available)];
        for from in PetStatus::ALL {
            for to in PetStatus::ALL {
                let expected = allowed.contains(&(from, to));
                assert_eq!(from.can_transition_to(to), expected, "{from} -> {to}");
                assert_eq!(from.transition_to(to).is_ok(), expected, "{from} -> {to}");
            }
        }
    }

    #[test]
    fn available_cannot_skip_pending_to_sold() {
        assert_eq!(
            Available.transition_to(Sold),
            Err(StatusTransitionError {
                from: Available,
                to: Sold
            })
        );
    }

    #[test]
    fn sold_is_final() {
        assert!(Sold.is_final());
        assert!(!Available.is_final() && !Pending.is_final());
        for to in PetStatus::ALL {
            assert!(Sold.transition_to(to).is_err());
        }
    }

    #[test]
    fn transition_error_names_both_states() {
        let err = Sold.transition_to(Available).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a pet cannot go from `sold` to `available`"
        );
    }
}
