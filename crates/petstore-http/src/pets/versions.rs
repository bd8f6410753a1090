//! A pet's entity tag, made from its version, and a client's `If-Match` read back as the
//! versions it names. The tag is `"<representation>.<version>"`: the version changes with every
//! change of the pet, and the representation's revision with every change of its JSON shape,
//! so one tag always stands for the same bytes (a strong tag). A page of pets is tagged the same
//! way, from its pets' ids and versions: hashing those instead of the page's bytes keeps the
//! tag's cost per pet fixed, however long the pets' descriptions and photo lists grow.

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

/// The strong entity tag of a page of `pets`, in the order the page lists them:
/// `"L<representation>-<hash>"`, a 64-bit hash of the page's length and each pet's id and
/// version. Each number is folded in by a rotate, an exclusive or and a multiplication by an
/// odd constant, each a one-to-one map of the running hash, so two pages that differ in one
/// pet's id or version never share a tag; splitmix64's finalizer then spreads the bits. The
/// same in every instance of a build (a client may revalidate against another instance); a
/// build that hashes differently only costs its clients one full answer. It never reads as a
/// pet's tag.
pub(crate) fn page_etag(pets: &[Pet]) -> EntityTag {
    const ODD: u64 = 0x9E37_79B9_7F4A_7C15;
    // A number's bits as they are: a negative one folds in as its two's complement.
    let fold = |hash: u64, number: i64| {
        (hash.rotate_left(5) ^ u64::from_ne_bytes(number.to_ne_bytes())).wrapping_mul(ODD)
    };
    let mut hash = fold(0, i64::try_from(pets.len()).unwrap_or(i64::MAX));
    for pet in pets {
        hash = fold(hash, pet.id().get());
        hash = fold(hash, pet.version().get());
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    hash ^= hash >> 31;
    EntityTag::strong(format!("L{REPRESENTATION}-{hash:016x}"))
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

    #[test]
    fn pages_of_neighbouring_pets_all_have_tags_of_their_own() {
        let mut tags = std::collections::HashSet::new();
        for id in 1..=3_000 {
            let pages = [
                vec![pet(id)],
                vec![pet(9_999), pet(id)],
                vec![pet(id), pet(id + 1)],
            ];
            for page in pages {
                let tag = page_etag(&page).opaque().to_owned();
                assert!(
                    tags.insert(tag),
                    "{:?}",
                    page.iter().map(Pet::id).collect::<Vec<_>>()
                );
            }
        }
    }
}
