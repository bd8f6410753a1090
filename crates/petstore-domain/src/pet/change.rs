//! Changing a stored pet: `PetChange` (what a client asks to change, in the shape of a JSON
//! Merge Patch, checked where it is made) and [`Pet::apply_change`], which holds the rules: a
//! status moves only along the life cycle and only while no order holds the pet, and a refused
//! change leaves the pet as it was.

use std::fmt;

use super::{
    CategoryId, Patch, Pet, PetDescription, PetId, PetName, PetStatus, PhotoUrls, Price,
    StatusTransitionError, Tags,
};
use crate::OrderId;

/// A field of a pet that a change can name, spelled as the spec's `Pet` schema spells it so a
/// message names the field the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PetField {
    Name,
    CategoryId,
    Status,
    Price,
    Description,
    PhotoUrls,
    Tags,
}

impl PetField {
    pub const ALL: [PetField; 7] = [
        PetField::Name,
        PetField::CategoryId,
        PetField::Status,
        PetField::Price,
        PetField::Description,
        PetField::PhotoUrls,
        PetField::Tags,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::CategoryId => "categoryId",
            Self::Status => "status",
            Self::Price => "price",
            Self::Description => "description",
            Self::PhotoUrls => "photoUrls",
            Self::Tags => "tags",
        }
    }

    /// Whether every pet has this field, so a change may set it but not clear it.
    pub const fn is_required(self) -> bool {
        match self {
            Self::Name | Self::CategoryId | Self::Status => true,
            Self::Price | Self::Description | Self::PhotoUrls | Self::Tags => false,
        }
    }
}

impl fmt::Display for PetField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fields of a change as asked for, each one kept, set or cleared; [`PetChange::new`]
/// checks them. Build it with `..Default::default()` for the fields left alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PetChangeFields {
    pub name: Patch<PetName>,
    pub category_id: Patch<CategoryId>,
    pub status: Patch<PetStatus>,
    pub price: Patch<Price>,
    pub description: Patch<PetDescription>,
    pub photo_urls: Patch<PhotoUrls>,
    pub tags: Patch<Tags>,
}

/// A change that clears fields every pet has; the change was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", required_message(.cleared))]
pub struct PetChangeInvalid {
    /// Every required field the change clears, in [`PetField::ALL`]'s order.
    pub cleared: Vec<PetField>,
}

fn required_message(cleared: &[PetField]) -> String {
    let names: Vec<String> = cleared.iter().map(|field| format!("`{field}`")).collect();
    match names.as_slice() {
        [one] => format!("{one} is required: it can be set but not cleared"),
        [init @ .., last] => {
            format!(
                "{} and {last} are required: they can be set but not cleared",
                init.join(", ")
            )
        }
        [] => String::from("no required field is cleared"),
    }
}

/// A change to a stored pet, in domain terms: each field left alone, set, or (for a field a pet
/// may lack) cleared. A field every pet has is never cleared here: [`new`](Self::new) refuses
/// that. Applied with [`Pet::apply_change`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PetChange {
    fields: PetChangeFields,
}

impl PetChange {
    /// The change `fields` asks for, or every required field it would clear.
    pub fn new(fields: PetChangeFields) -> Result<Self, PetChangeInvalid> {
        let clears = [
            (PetField::Name, matches!(fields.name, Patch::Clear)),
            (
                PetField::CategoryId,
                matches!(fields.category_id, Patch::Clear),
            ),
            (PetField::Status, matches!(fields.status, Patch::Clear)),
        ];
        let cleared: Vec<PetField> = clears
            .into_iter()
            .filter(|(field, clears)| *clears && field.is_required())
            .map(|(field, _)| field)
            .collect();
        if cleared.is_empty() {
            Ok(Self { fields })
        } else {
            Err(PetChangeInvalid { cleared })
        }
    }

    /// Whether the change names no field at all (`{}`): applying it changes nothing.
    pub fn is_empty(&self) -> bool {
        let PetChangeFields {
            name,
            category_id,
            status,
            price,
            description,
            photo_urls,
            tags,
        } = &self.fields;
        name.is_keep()
            && category_id.is_keep()
            && status.is_keep()
            && price.is_keep()
            && description.is_keep()
            && photo_urls.is_keep()
            && tags.is_keep()
    }

    /// The name the change gives the pet, if it sets one.
    pub fn name(&self) -> Option<&PetName> {
        self.fields.name.as_ref().set_value()
    }

    /// The category the change moves the pet to, if it sets one.
    pub fn category_id(&self) -> Option<CategoryId> {
        self.fields.category_id.as_ref().set_value().copied()
    }

    /// The status the change asks for, if it sets one.
    pub fn status(&self) -> Option<PetStatus> {
        self.fields.status.as_ref().set_value().copied()
    }
}

/// Applies `patch` to an optional field; whether it changed.
fn patch_option<T: Clone + PartialEq>(field: &mut Option<T>, patch: &Patch<T>) -> bool {
    let next = match patch {
        Patch::Keep => return false,
        Patch::Set(value) => Some(value.clone()),
        Patch::Clear => None,
    };
    let changed = *field != next;
    *field = next;
    changed
}

/// Applies `patch` to a list field, where cleared is empty; whether it changed.
fn patch_list<T: Clone + PartialEq + Default>(field: &mut T, patch: &Patch<T>) -> bool {
    let next = match patch {
        Patch::Keep => return false,
        Patch::Set(value) => value.clone(),
        Patch::Clear => T::default(),
    };
    let changed = *field != next;
    *field = next;
    changed
}

/// Why a change to a pet was refused; the pet did not change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PetChangeError {
    /// The change moves the status of a pet that an order (placed or approved) holds: that
    /// order alone moves it, so the pet and its order cannot disagree.
    #[error(
        "pet {pet} is held by order {order}, so only that order moves its status: deliver or \
         cancel the order instead"
    )]
    HeldByOrder { pet: PetId, order: OrderId },
    /// The change asks for a status the life cycle does not reach from the current one.
    #[error(transparent)]
    Status(#[from] StatusTransitionError),
}

impl Pet {
    /// Applies `change` to the pet: all of it, or (on a refusal) none of it.
    ///
    /// `holding_order` is the order that holds the pet (one `placed` or `approved`; see
    /// [`OrderStatus::holds_its_pet`](crate::OrderStatus::holds_its_pet)), if any. While one
    /// does, the status may not move; its name and category may. A new status must be one the
    /// life cycle reaches from the current one ([`PetStatus::transition_to`]); asking for the
    /// status the pet already has is no move, so it is neither refused nor a change.
    ///
    /// Returns whether the pet changed; if it did, its version moved on. A change that names no
    /// field, or sets every field it names to the value the pet already has, changes nothing:
    /// the pet's version stays as it is (and the pet need not be written), so a client's
    /// validator still matches.
    pub fn apply_change(
        &mut self,
        change: &PetChange,
        holding_order: Option<OrderId>,
    ) -> Result<bool, PetChangeError> {
        let status = match change.status() {
            Some(next) if next != self.status => {
                if let Some(order) = holding_order {
                    return Err(PetChangeError::HeldByOrder {
                        pet: self.id,
                        order,
                    });
                }
                self.status.transition_to(next)?
            }
            _ => self.status,
        };
        // Every check is behind us: nothing below can fail, so a refusal changed nothing.
        let mut changed = status != self.status;
        self.status = status;
        if let Some(name) = change.name() {
            if *name != self.name {
                self.name = name.clone();
                changed = true;
            }
        }
        if let Some(category_id) = change.category_id() {
            if category_id != self.category_id {
                self.category_id = category_id;
                changed = true;
            }
        }
        let fields = &change.fields;
        let details = &mut self.details;
        changed |= patch_option(&mut details.price, &fields.price);
        changed |= patch_option(&mut details.description, &fields.description);
        changed |= patch_list(&mut details.photo_urls, &fields.photo_urls);
        changed |= patch_list(&mut details.tags, &fields.tags);
        if changed {
            self.version = self.version.next();
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewPet;
    use PetStatus::{Available, Pending, Sold};

    fn pet(status: PetStatus) -> Pet {
        NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(3).unwrap(),
            Some(status),
        )
        .into_pet(PetId::new(7))
    }

    fn name(raw: &str) -> PetName {
        PetName::parse(raw).unwrap()
    }

    fn category(id: i64) -> CategoryId {
        CategoryId::parse(id).unwrap()
    }

    fn change(fields: PetChangeFields) -> PetChange {
        PetChange::new(fields).unwrap()
    }

    fn set_status(status: PetStatus) -> PetChange {
        change(PetChangeFields {
            status: Patch::Set(status),
            ..Default::default()
        })
    }

    #[test]
    fn a_change_keeps_what_it_sets() {
        let change = change(PetChangeFields {
            name: Patch::Set(name("Tom")),
            category_id: Patch::Set(category(4)),
            status: Patch::Set(Sold),
            ..Default::default()
        });
        assert_eq!(change.name(), Some(&name("Tom")));
        assert_eq!(change.category_id(), Some(category(4)));
        assert_eq!(change.status(), Some(Sold));
        assert!(!change.is_empty());
    }

    #[test]
    fn only_a_change_naming_no_field_is_empty() {
        let empty = change(PetChangeFields::default());
        assert!(empty.is_empty());
        assert_eq!(
            (empty.name(), empty.category_id(), empty.status()),
            (None, None, None)
        );
        assert_eq!(empty, PetChange::default());
        assert!(!set_status(Available).is_empty());
        assert!(!change(PetChangeFields {
            category_id: Patch::Set(category(1)),
            ..Default::default()
        })
        .is_empty());
    }

    #[test]
    fn clearing_a_required_field_is_refused_naming_each_one() {
        let required = [PetField::Name, PetField::CategoryId, PetField::Status];
        for field in PetField::ALL {
            assert_eq!(field.is_required(), required.contains(&field), "{field}");
        }
        let only_name = PetChange::new(PetChangeFields {
            name: Patch::Clear,
            status: Patch::Set(Pending),
            ..Default::default()
        });
        assert_eq!(
            only_name,
            Err(PetChangeInvalid {
                cleared: vec![PetField::Name]
            })
        );
        let every = PetChange::new(PetChangeFields {
            name: Patch::Clear,
            category_id: Patch::Clear,
            status: Patch::Clear,
            price: Patch::Clear,
            description: Patch::Clear,
            photo_urls: Patch::Clear,
            tags: Patch::Clear,
        });
        assert_eq!(
            every,
            Err(PetChangeInvalid {
                cleared: required.to_vec()
            })
        );
    }

    /// Clients show these messages to their users: the fields, as the client spelled them.
    #[test]
    fn clearing_messages_name_the_fields_in_plain_english() {
        let message = |cleared: &[PetField]| {
            PetChangeInvalid {
                cleared: cleared.to_vec(),
            }
            .to_string()
        };
        assert_eq!(
            message(&[PetField::CategoryId]),
            "`categoryId` is required: it can be set but not cleared"
        );
        assert_eq!(
            message(&[PetField::Name, PetField::Status]),
            "`name` and `status` are required: they can be set but not cleared"
        );
        assert_eq!(
            message(&[PetField::Name, PetField::CategoryId, PetField::Status]),
            "`name`, `categoryId` and `status` are required: they can be set but not cleared"
        );
    }

    #[test]
    fn setting_fields_changes_them_and_says_so() {
        let mut rex = pet(Available);
        let changed = rex
            .apply_change(
                &change(PetChangeFields {
                    name: Patch::Set(name("Tom")),
                    category_id: Patch::Set(category(4)),
                    status: Patch::Set(Pending),
                    ..Default::default()
                }),
                None,
            )
            .unwrap();
        assert!(changed);
        assert_eq!(rex.id(), PetId::new(7));
        assert_eq!(rex.name(), &name("Tom"));
        assert_eq!(rex.category_id(), category(4));
        assert_eq!(rex.status(), Pending);
    }

    #[test]
    fn a_kept_field_stays_as_it_was() {
        let mut rex = pet(Available);
        let changed = rex
            .apply_change(
                &change(PetChangeFields {
                    category_id: Patch::Set(category(9)),
                    ..Default::default()
                }),
                None,
            )
            .unwrap();
        assert!(changed);
        assert_eq!(
            (rex.name(), rex.category_id(), rex.status()),
            (&name("Rex"), category(9), Available)
        );
    }

    /// The version moves only when this says something changed: an empty change, or one that
    /// sets every field to its current value, must leave a client's ETag valid.
    #[test]
    fn setting_the_current_values_or_nothing_is_no_change() {
        for status in PetStatus::ALL {
            let mut rex = pet(status);
            let same = change(PetChangeFields {
                name: Patch::Set(name("Rex")),
                category_id: Patch::Set(category(3)),
                status: Patch::Set(status),
                ..Default::default()
            });
            // Even while an order holds the pet: staying put is no move.
            for holding in [None, Some(OrderId::new(12))] {
                assert_eq!(rex.apply_change(&same, holding), Ok(false), "{status}");
                assert_eq!(rex.apply_change(&PetChange::default(), holding), Ok(false));
                assert_eq!(rex, pet(status));
            }
        }
    }

    #[test]
    fn any_one_field_that_differs_is_a_change() {
        let changes = [
            PetChangeFields {
                name: Patch::Set(name("Rex ")),
                ..Default::default()
            },
            PetChangeFields {
                category_id: Patch::Set(category(2)),
                ..Default::default()
            },
            PetChangeFields {
                status: Patch::Set(Pending),
                ..Default::default()
            },
        ];
        for fields in changes {
            let mut rex = pet(Available);
            assert_eq!(
                rex.apply_change(&change(fields.clone()), None),
                Ok(true),
                "{fields:?}"
            );
            assert_ne!(rex, pet(Available));
        }
    }

    #[test]
    fn status_moves_exactly_along_the_life_cycle() {
        for from in PetStatus::ALL {
            for to in PetStatus::ALL.into_iter().filter(|to| *to != from) {
                let mut rex = pet(from);
                let outcome = rex.apply_change(&set_status(to), None);
                if from.can_transition_to(to) {
                    assert_eq!(outcome, Ok(true), "{from} -> {to}");
                    assert_eq!(rex.status(), to);
                } else {
                    assert_eq!(
                        outcome,
                        Err(PetChangeError::Status(StatusTransitionError { from, to })),
                        "{from} -> {to}"
                    );
                    assert_eq!(rex, pet(from), "unchanged");
                }
            }
        }
    }

    #[test]
    fn a_refused_status_leaves_every_other_field_alone_too() {
        let everything = |status| PetChangeFields {
            name: Patch::Set(name("Tom")),
            category_id: Patch::Set(category(4)),
            status: Patch::Set(status),
            ..Default::default()
        };
        let mut sold = pet(Sold);
        assert!(sold
            .apply_change(&change(everything(Available)), None)
            .is_err());
        assert_eq!(sold, pet(Sold));

        let mut held = pet(Pending);
        assert!(held
            .apply_change(&change(everything(Available)), Some(OrderId::new(12)))
            .is_err());
        assert_eq!(held, pet(Pending));
    }

    #[test]
    fn a_held_pet_keeps_its_status_but_may_be_renamed() {
        for to in [Available, Sold] {
            let mut held = pet(Pending);
            assert_eq!(
                held.apply_change(&set_status(to), Some(OrderId::new(12))),
                Err(PetChangeError::HeldByOrder {
                    pet: PetId::new(7),
                    order: OrderId::new(12)
                })
            );
            assert_eq!(held.status(), Pending);
        }
        let mut held = pet(Pending);
        let rename = change(PetChangeFields {
            name: Patch::Set(name("Tom")),
            category_id: Patch::Set(category(5)),
            ..Default::default()
        });
        assert_eq!(held.apply_change(&rename, Some(OrderId::new(12))), Ok(true));
        assert_eq!(
            (held.name(), held.category_id(), held.status()),
            (&name("Tom"), category(5), Pending)
        );
    }

    /// The 409's message: it names the pet and the order that holds it, and what to do.
    #[test]
    fn refusals_say_why_in_plain_english() {
        let mut held = pet(Pending);
        let err = held
            .apply_change(&set_status(Available), Some(OrderId::new(12)))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "pet 7 is held by order 12, so only that order moves its status: deliver or cancel \
             the order instead"
        );
        let mut sold = pet(Sold);
        let err = sold.apply_change(&set_status(Pending), None).unwrap_err();
        assert_eq!(err.to_string(), "a pet cannot go from `sold` to `pending`");
    }
}

#[cfg(test)]
mod detail_tests {
    use super::*;
    use crate::{NewPet, PetDescription, Tags};

    #[test]
    fn details_are_set_cleared_and_compared_like_the_other_fields() {
        let mut pet = NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(3).unwrap(),
            None,
        )
        .into_pet(PetId::new(7));
        let set = PetChange::new(PetChangeFields {
            description: Patch::Set(PetDescription::parse("A good dog").unwrap()),
            tags: Patch::Set(Tags::parse(&["Friendly"]).unwrap()),
            ..Default::default()
        })
        .unwrap();
        assert!(pet.apply_change(&set, None).unwrap());
        assert_eq!(pet.details().tags.as_slice()[0].as_str(), "friendly");
        // The same again changes nothing, and keeps the version.
        let version = pet.version();
        assert!(!pet.apply_change(&set, None).unwrap());
        assert_eq!(pet.version(), version);
        let clear = PetChange::new(PetChangeFields {
            description: Patch::Clear,
            tags: Patch::Clear,
            ..Default::default()
        })
        .unwrap();
        assert!(pet.apply_change(&clear, None).unwrap());
        assert!(pet.details().is_empty());
        assert_eq!(pet.version(), version.next());
    }
}
