//! Use-case tests with mocked ports: each one pins a rule a client would notice.

use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{
    CategoryId, NamePrefix, NewPet, OrderId, PageLimit, Patch, Pet, PetChangeFields, PetId, PetIds,
    PetListQuery, PetName, PetSearch, PetStatus, PetVersion,
};

use super::*;
use crate::deprecation::GET_PET_SUNSET_AT_UNIX;
use crate::MockClock;

fn pet(id: i64) -> Pet {
    new_pet().into_pet(PetId::new(id))
}

fn new_pet() -> NewPet {
    NewPet::new(
        PetName::parse("Rex").unwrap(),
        CategoryId::parse(3).unwrap(),
        None,
    )
}

fn clock_at(instant: SystemTime) -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(instant);
    clock
}

fn before_sunset() -> MockClock {
    clock_at(UNIX_EPOCH + Duration::from_secs(GET_PET_SUNSET_AT_UNIX - 1))
}

fn service(repository: MockPetRepository, clock: MockClock) -> PetService {
    PetService::new(Arc::new(repository), Arc::new(clock))
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable(Box::new(io::Error::new(
        io::ErrorKind::TimedOut,
        "pool timed out",
    )))
}

fn unexpected() -> RepositoryError {
    RepositoryError::Unexpected(Box::new(io::Error::other("disk I/O error")))
}

#[tokio::test]
async fn create_pet_stores_the_new_pet_and_returns_it_with_its_id() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_create()
        .withf(|new_pet_given, plan| *new_pet_given == new_pet() && plan.is_none())
        .times(1)
        .returning(|new_pet, _| Ok(Written::Done(new_pet.into_pet(PetId::new(7)), None)));

    let created = service(repository, MockClock::new())
        .create_pet(new_pet(), None)
        .await
        .map(|written| written.done().expect("carried out"))
        .unwrap();

    assert_eq!(created, pet(7));
    assert_eq!(created.status(), PetStatus::Available);
}

#[tokio::test]
async fn create_pet_passes_storage_failures_through_unchanged_in_kind() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_create()
        .returning(|_, _| Err(unavailable()));
    let err = service(repository, MockClock::new())
        .create_pet(new_pet(), None)
        .await
        .map(|written| written.done().expect("carried out"))
        .unwrap_err();
    assert!(matches!(err, RepositoryError::Unavailable(_)));
}

#[tokio::test]
async fn list_pets_asks_for_one_more_than_the_limit_and_reports_the_next_page() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .withf(|status, search, after, max| {
            *status == Some(PetStatus::Pending)
                && search.is_empty()
                && *after == Some(PetId::new(10))
                && *max == 3
        })
        .times(1)
        .returning(|_, _, _, _| Ok(vec![pet(11), pet(12), pet(13)]));
    let query = PetListQuery {
        limit: PageLimit::parse(2).unwrap(),
        status: Some(PetStatus::Pending),
        after: Some(PetId::new(10)),
        ..Default::default()
    };

    let page = service(repository, MockClock::new())
        .list_pets(query)
        .await
        .unwrap();

    assert_eq!(page.pets, vec![pet(11), pet(12)]);
    assert_eq!(page.next_after, Some(PetId::new(12)));
}

#[tokio::test]
async fn list_pets_has_no_next_page_when_storage_returns_no_extra_row() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .withf(|status, search, after, max| {
            status.is_none() && search.is_empty() && after.is_none() && *max == 21
        })
        .returning(|_, _, _, _| Ok((1..=20).map(pet).collect()));

    let page = service(repository, MockClock::new())
        .list_pets(PetListQuery::default())
        .await
        .unwrap();

    assert_eq!(page.pets.len(), 20);
    assert_eq!(page.next_after, None);
}

#[tokio::test]
async fn a_search_by_name_pages_in_name_order_from_the_cursor_s_name_and_id() {
    let named = |id: i64, name: &str| {
        NewPet::new(
            PetName::parse(name).unwrap(),
            CategoryId::parse(1).unwrap(),
            None,
        )
        .into_pet(PetId::new(id))
    };
    let mut repository = MockPetRepository::new();
    repository.expect_list().never();
    repository
        .expect_list_by_name()
        .withf(|status, search, after, max| {
            status.is_none()
                && search.name.as_ref().map(NamePrefix::as_str) == Some("re")
                && *after
                    == Some(NamePosition {
                        folded_name: "rex".to_owned(),
                        id: PetId::new(7),
                    })
                && *max == 3
        })
        .times(1)
        .returning(move |_, _, _, _| Ok(vec![named(9, "Rex"), named(2, "REXA"), named(3, "rey")]));
    let query = PetListQuery {
        limit: PageLimit::parse(2).unwrap(),
        search: PetSearch {
            name: Some(NamePrefix::parse("Re").unwrap()),
            ..Default::default()
        },
        after: Some(PetId::new(7)),
        after_name: Some("rex".to_owned()),
        ..Default::default()
    };

    let page = service(repository, MockClock::new())
        .list_pets(query)
        .await
        .unwrap();

    assert_eq!(page.pets, vec![named(9, "Rex"), named(2, "REXA")]);
    assert_eq!(page.next_after, Some(PetId::new(2)));
    assert_eq!(page.next_after_name.as_deref(), Some("rexa"));
}

#[tokio::test]
async fn list_pets_maps_storage_failures() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .returning(|_, _, _, _| Err(unexpected()));
    let err = service(repository, MockClock::new())
        .list_pets(PetListQuery::default())
        .await
        .unwrap_err();
    assert!(matches!(err, RepositoryError::Unexpected(_)));
}

#[tokio::test]
async fn get_pet_returns_the_pet_before_the_sunset() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_find()
        .with(eq(PetId::new(5)))
        .returning(|id| Ok(Some(pet(id.get()))));

    let found = service(repository, before_sunset())
        .get_pet(PetId::new(5))
        .await
        .unwrap();

    assert_eq!(found, pet(5));
}

#[tokio::test]
async fn get_pet_of_an_unknown_id_is_not_found() {
    let mut repository = MockPetRepository::new();
    repository.expect_find().returning(|_| Ok(None));
    let err = service(repository, before_sunset())
        .get_pet(PetId::new(404))
        .await
        .unwrap_err();
    assert!(matches!(err, GetPetError::NotFound(id) if id == PetId::new(404)));
}

#[tokio::test]
async fn get_pet_is_gone_from_the_sunset_instant_on_without_touching_storage() {
    for seconds_after in [0, 1, 86_400 * 365] {
        let mut repository = MockPetRepository::new();
        repository.expect_find().never();
        let now = UNIX_EPOCH + Duration::from_secs(GET_PET_SUNSET_AT_UNIX + seconds_after);

        let err = service(repository, clock_at(now))
            .get_pet(PetId::new(1))
            .await
            .unwrap_err();

        assert!(
            matches!(err, GetPetError::Gone { sunset } if sunset == get_pet_sunset()),
            "{seconds_after}s after the sunset: {err:?}"
        );
    }
}

#[tokio::test]
async fn get_pet_maps_storage_failures() {
    let mut repository = MockPetRepository::new();
    repository.expect_find().returning(|_| Err(unavailable()));
    let err = service(repository, before_sunset())
        .get_pet(PetId::new(1))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        GetPetError::Repository(RepositoryError::Unavailable(_))
    ));
}

#[tokio::test]
async fn check_storage_reports_an_unreachable_store() {
    let mut repository = MockPetRepository::new();
    repository.expect_ping().returning(|| Err(unavailable()));
    let result = service(repository, MockClock::new()).check_storage().await;
    assert!(matches!(result, Err(RepositoryError::Unavailable(_))));
}

#[tokio::test]
async fn a_lookup_by_id_reads_the_ids_once_and_pages_them_like_a_listing() {
    let ids = PetIds::new([9, 2, 5, 7].map(PetId::new).to_vec()).unwrap();
    let mut repository = MockPetRepository::new();
    let sold = Pet::restore(
        PetId::new(5),
        PetName::parse("Rex").unwrap(),
        CategoryId::parse(3).unwrap(),
        PetStatus::Sold,
        PetVersion::first(),
    );
    repository
        .expect_find_many()
        .withf(|ids: &[PetId]| ids == [2, 5, 7, 9].map(PetId::new))
        .times(2)
        .returning(move |_| Ok(vec![pet(2), sold.clone(), pet(7)]));
    let service = service(repository, MockClock::new());

    let query = PetListQuery {
        limit: PageLimit::parse(1).unwrap(),
        status: Some(PetStatus::Available),
        after: None,
        ..Default::default()
    };
    let first = service.list_pets_by_id(query.clone(), &ids).await.unwrap();
    assert_eq!(first.pets, vec![pet(2)]);
    assert_eq!(first.next_after, Some(PetId::new(2)));
    let after = PetListQuery {
        after: first.next_after,
        ..query
    };
    let second = service.list_pets_by_id(after, &ids).await.unwrap();
    assert_eq!(second.pets, vec![pet(7)], "the sold one is filtered out");
    assert_eq!(second.next_after, None);
}

/// A repository whose `change` runs the use case's work once on `stored`, held by `holding`,
/// and hands back what it decided (through `written`).
fn changing(
    stored: Pet,
    holding: Option<OrderId>,
    written: Arc<std::sync::Mutex<Option<PetWrite>>>,
) -> MockPetRepository {
    let mut repository = MockPetRepository::new();
    repository
        .expect_change()
        .times(1)
        .returning(move |id, work, plan| {
            assert_eq!(id, stored.id());
            assert!(plan.is_none());
            let decided = work(stored.clone(), holding)?;
            let pet = decided.pet().clone();
            *written.lock().unwrap() = Some(decided);
            Ok(Written::Done(pet, None))
        });
    repository
}

fn rename(name: &str) -> PetChange {
    PetChange::new(PetChangeFields {
        name: Patch::Set(PetName::parse(name).unwrap()),
        ..Default::default()
    })
    .unwrap()
}

#[tokio::test]
async fn a_change_writes_the_changed_pet_at_its_next_version() {
    let written = Default::default();
    let service = service(
        changing(pet(7), None, Arc::clone(&written)),
        MockClock::new(),
    );
    let changed = service
        .update_pet(PetId::new(7), rename("Max"), None, None)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(changed.name().as_str(), "Max");
    assert_eq!(changed.version(), PetVersion::first().next());
    assert!(matches!(
        written.lock().unwrap().as_ref(),
        Some(PetWrite::Changed(_))
    ));
}

#[tokio::test]
async fn a_change_that_changes_nothing_writes_nothing_and_keeps_the_version() {
    let written = Default::default();
    let service = service(
        changing(pet(7), None, Arc::clone(&written)),
        MockClock::new(),
    );
    let same = service
        .update_pet(PetId::new(7), rename("Rex"), None, None)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(same.version(), PetVersion::first());
    assert!(matches!(
        written.lock().unwrap().as_ref(),
        Some(PetWrite::Unchanged(_))
    ));
}

#[tokio::test]
async fn a_change_based_on_another_version_is_stale_and_writes_nothing() {
    let written = Default::default();
    let service = service(
        changing(pet(7), None, Arc::clone(&written)),
        MockClock::new(),
    );
    let condition = VersionCondition::OneOf(vec![PetVersion::first().next()]);
    let err = service
        .update_pet(PetId::new(7), rename("Max"), Some(condition), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PetWriteError::Stale { current } if current == PetVersion::first()),
        "{err}"
    );
    assert!(written.lock().unwrap().is_none());
}

#[tokio::test]
async fn a_held_pet_keeps_its_status_and_the_refusal_names_the_order() {
    let written = Default::default();
    let repository = changing(pet(7), Some(OrderId::new(12)), Arc::clone(&written));
    let change = PetChange::new(PetChangeFields {
        status: Patch::Set(PetStatus::Pending),
        ..Default::default()
    })
    .unwrap();
    let err = service(repository, MockClock::new())
        .update_pet(PetId::new(7), change, Some(VersionCondition::Any), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("order 12"), "{err}");
    assert!(written.lock().unwrap().is_none());
}

#[tokio::test]
async fn removal_writes_the_pet_gone_now_unless_an_order_holds_it() {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(UNIX_EPOCH + Duration::from_secs(1_900_000_000));
    let written = Default::default();
    let removed = service(changing(pet(7), None, Arc::clone(&written)), clock)
        .remove_pet(PetId::new(7), None)
        .await
        .unwrap();
    assert_eq!(removed.version(), PetVersion::first().next());
    assert!(matches!(
        written.lock().unwrap().as_ref(),
        Some(PetWrite::Removed(_, 1_900_000_000))
    ));

    let mut clock = MockClock::new();
    clock.expect_now().return_const(UNIX_EPOCH);
    let written = Default::default();
    let err = service(
        changing(pet(7), Some(OrderId::new(3)), Arc::clone(&written)),
        clock,
    )
    .remove_pet(PetId::new(7), None)
    .await
    .unwrap_err();
    assert!(matches!(err, PetWriteError::Removal(_)), "{err}");
    assert!(written.lock().unwrap().is_none());
}
