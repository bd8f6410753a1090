//! A pet's entity tag, made from its version, and a client's `If-Match` read back as the
//! versions it names. The tag is `"<representation>.<version>"`: the version changes with every
//! change of the pet, and the representation's revision with every change of its JSON shape,
//! so one tag always stands for the same bytes (a strong tag). A page of pets is tagged the same
//! way, from its pets' ids and versions: hashing those instead of the page's bytes keeps the
//! tag's cost per pet fixed, however long the pets' descriptions and photo lists grow.

use std::hash::Hasher as _;

use actix_web::HttpRequest;
use petstore_application::VersionCondition;
use petstore_domain::{Pet, PetVersion};

use crate::error::{ApiError, ErrorCode};
use crate::state::HttpState;
use crate::wire::conditional::{self, Precondition};
use crate::wire::etag::EntityTag;

/// The revision of the pet's JSON representation: raised when its bytes change for the same
/// pet (a field added to `Pet`), so that no tag names two representations.
const REPRESENTATION: u32 = 1;

/// The strong entity tag of `pet`'s representation.
pub(crate) fn pet_etag(pet: &Pet) -> EntityTag {
    EntityTag::strong(format!("{REPRESENTATION}.{}", pet.version()))
}

/// The strong entity tag of a page of `pets`, in the order the page lists them: `"L<representation>-<hash>"`, a 64-bit
/// hash of each pet's id and version. SipHash with std's fixed keys, so every instance of one
/// build tags a page alike (a client may revalidate against another instance); a build that
/// hashes differently only costs its clients one full answer. It never reads as a pet's tag.
pub(crate) fn page_etag(pets: &[Pet]) -> EntityTag {
    let mut hasher = std::hash::DefaultHasher::new();
    for pet in pets {
        hasher.write_i64(pet.id().get());
        hasher.write_i64(pet.version().get());
    }
    EntityTag::strong(format!("L{REPRESENTATION}-{:016x}", hasher.finish()))
}

/// The version a tag of [`pet_etag`] names; `None` for any other tag (another representation's,
/// or not one of ours), which then matches no version.
fn version_of(opaque: &str) -> Option<PetVersion> {
    let (representation, version) = opaque.split_once('.')?;
    if representation.parse::<u32>().ok()? != REPRESENTATION {
        return None;
    }
    PetVersion::parse(version.parse().ok()?).ok()
}

/// The condition a change of a pet is under: the request's `If-Match` as versions (`*`: any),
/// none without one; 428 without one when `state` requires it, 400 for a malformed one.
pub(crate) fn version_condition(
    state: &HttpState,
    req: &HttpRequest,
) -> Result<Option<VersionCondition>, ApiError> {
    Ok(match conditional::if_match(req)? {
        None if state.if_match_required() => {
            return Err(ApiError::new(
                ErrorCode::PreconditionRequired,
                "this server changes a pet only under `If-Match`: send the `ETag` of the pet \
                 as you last read it (`If-Match: \"1.3\"`), or `*`",
            ))
        }
        None => None,
        Some(Precondition::Any) => Some(VersionCondition::Any),
        Some(tags) => Some(VersionCondition::OneOf(
            tags.strong_opaques().filter_map(version_of).collect(),
        )),
    })
}

#[cfg(test)]
mod tests {
    use petstore_domain::{CategoryId, NewPet, PetId, PetName};

    use super::*;

    #[test]
    fn a_pet_s_tag_names_its_version_and_reads_back_as_it() {
        let mut pet = NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(1).unwrap(),
            None,
        )
        .into_pet(PetId::new(4));
        pet.change_status(petstore_domain::PetStatus::Pending)
            .unwrap();
        let tag = pet_etag(&pet);
        assert_eq!(tag.opaque(), "1.2");
        assert_eq!(version_of(tag.opaque()), Some(pet.version()));
        for other in ["2.2", "1.0", "1.x", "2", "", "1.2.3"] {
            assert_eq!(version_of(other), None, "{other}");
        }
    }

    fn pet(id: i64) -> Pet {
        NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(1).unwrap(),
            None,
        )
        .into_pet(PetId::new(id))
    }

    #[test]
    fn a_page_s_tag_changes_with_any_of_its_pets_and_with_which_pets_it_lists() {
        let page = vec![pet(1), pet(2)];
        let tag = page_etag(&page);
        assert_eq!(tag, page_etag(&[pet(1), pet(2)]));
        assert!(!tag.is_weak());
        assert_eq!(version_of(tag.opaque()), None, "a page's tag is no pet's");

        let mut changed = page.clone();
        changed[1]
            .change_status(petstore_domain::PetStatus::Pending)
            .unwrap();
        assert_ne!(page_etag(&changed), tag, "a pet of the page changed");
        assert_ne!(page_etag(&[pet(1)]), tag, "a pet left the page");
        assert_ne!(
            page_etag(&[pet(1), pet(3)]),
            tag,
            "another pet in its place"
        );
        assert_ne!(page_etag(&[pet(2), pet(1)]), tag, "another order");
        assert_ne!(page_etag(&[]), tag);
    }
}
