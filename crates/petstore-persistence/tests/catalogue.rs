//! What a shop shows, as every adapter must keep it (memory, a SQLite file, PostgreSQL): a pet's
//! price, description, photos and tags stored and read back as given, changed and cleared; the
//! listing's search by category, tag and the start of a name (Unicode case folded), alone, with
//! each other and the status, paged; and an order keeping the price its pet had.

mod common;

use std::sync::Arc;

use common::{done, new_pet, Fixture};
use petstore_application::{OrderService, PetService, SystemClock};
use petstore_domain::{
    Caller, CategoryId, KeyId, KeyScope, NamePosition, NamePrefix, NewOrder, OrderQuantity, Patch,
    Pet, PetChange, PetChangeFields, PetDescription, PetDetails, PetId, PetName, PetSearch,
    PetStatus, PhotoUrls, Price, Tag, Tags,
};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    details_are_kept_as_given_and_changed_and_cleared,
    the_search_filters_alone_together_and_paged,
    a_search_by_name_pages_in_name_order_every_match_once,
    an_order_keeps_the_price_its_pet_had,
);

/// On the databases: rows changed with SQL behind the service's back.
mod in_sql {
    use super::*;

    petstore_test_database::on_backends!(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
        [sqlite, postgres]
        names_written_without_their_fold_are_folded_at_the_next_start,
    );
}

fn details(price: &str, tags: &[&str]) -> PetDetails {
    PetDetails {
        price: Some(Price::parse(price, "EUR").expect("a price")),
        description: Some(PetDescription::parse("A good dog.\nHouse-trained.").expect("text")),
        photo_urls: PhotoUrls::parse(&["https://example.com/rex.jpg"]).expect("URLs"),
        tags: Tags::parse(tags).expect("tags"),
    }
}

async fn create(fixture: &Fixture, name: &str, category: i64, details: PetDetails) -> Pet {
    fixture
        .repo()
        .create(new_pet(name, category, None).with_details(details), None)
        .await
        .map(done)
        .expect("create")
}

async fn search(fixture: &Fixture, status: Option<PetStatus>, search: PetSearch) -> Vec<String> {
    fixture
        .repo()
        .list(status, &search, None, 100)
        .await
        .expect("list")
        .iter()
        .map(|pet| pet.name().as_str().to_owned())
        .collect()
}

async fn details_are_kept_as_given_and_changed_and_cleared(fixture: Fixture) {
    let rex = create(
        &fixture,
        "Rex",
        1,
        details("12.5", &["Friendly", "Small  Dog"]),
    )
    .await;
    assert_eq!(
        rex.details().price.map(|p| p.amount()).as_deref(),
        Some("12.50")
    );
    let found = fixture
        .repo()
        .find(rex.id())
        .await
        .expect("find")
        .expect("the pet");
    assert_eq!(found, rex);
    let listed = fixture
        .repo()
        .list(None, &PetSearch::default(), None, 10)
        .await
        .expect("list");
    assert_eq!(listed, std::slice::from_ref(&rex));

    let pets = PetService::new(fixture.repo_arc(), Arc::new(SystemClock));
    let change = PetChange::new(PetChangeFields {
        price: Patch::Set(Price::parse("15", "EUR").expect("a price")),
        description: Patch::Clear,
        tags: Patch::Set(Tags::parse(&["calm"]).expect("tags")),
        ..Default::default()
    })
    .expect("a change");
    let changed = pets
        .update_pet(rex.id(), change, None, None)
        .await
        .map(done)
        .expect("change");
    assert_eq!(changed.details().description, None);
    let stored = fixture
        .repo()
        .find(rex.id())
        .await
        .expect("find")
        .expect("the pet");
    assert_eq!(stored, changed);
    // The tag search follows the change: the old tags find nothing.
    let tagged = |tag: &str| PetSearch {
        tag: Some(Tag::parse(tag).expect("a tag")),
        ..Default::default()
    };
    assert!(search(&fixture, None, tagged("friendly")).await.is_empty());
    assert_eq!(search(&fixture, None, tagged("calm")).await, ["Rex"]);
    // A rename leaves the tag rows as they are; a change of the category and the status moves
    // them with the pet.
    let calm_in = |category: i64| PetSearch {
        category_id: Some(CategoryId::parse(category).expect("a category")),
        ..tagged("calm")
    };
    for fields in [
        PetChangeFields {
            name: Patch::Set(PetName::parse("Rexy").expect("a name")),
            ..Default::default()
        },
        PetChangeFields {
            category_id: Patch::Set(CategoryId::parse(2).expect("a category")),
            status: Patch::Set(PetStatus::Pending),
            ..Default::default()
        },
    ] {
        let change = PetChange::new(fields).expect("a change");
        pets.update_pet(rex.id(), change, None, None)
            .await
            .map(done)
            .expect("change");
    }
    assert_eq!(
        search(&fixture, Some(PetStatus::Pending), calm_in(2)).await,
        ["Rexy"]
    );
    assert!(search(&fixture, None, calm_in(1)).await.is_empty());
    assert!(search(&fixture, Some(PetStatus::Available), tagged("calm"))
        .await
        .is_empty());
    // A pet of the spec's fields alone has none of them.
    let plain = create(&fixture, "Tom", 1, PetDetails::default()).await;
    assert!(plain.details().is_empty());
    let plain = fixture
        .repo()
        .find(plain.id())
        .await
        .expect("find")
        .expect("the pet");
    assert!(plain.details().is_empty());
}

async fn the_search_filters_alone_together_and_paged(fixture: Fixture) {
    for (name, category, tags) in [
        ("Zoë", 1, &["cat"][..]),
        ("zorro", 2, &["dog", "small"][..]),
        ("ZOLTAN", 1, &["dog"][..]),
        ("Rex", 1, &["dog"][..]),
        ("Zed", 2, &[][..]),
    ] {
        let details = PetDetails {
            tags: Tags::parse(tags).expect("tags"),
            ..Default::default()
        };
        create(&fixture, name, category, details).await;
    }
    let prefix = |text: &str| Some(NamePrefix::parse(text).expect("a prefix"));
    let tag = |text: &str| Some(Tag::parse(text).expect("a tag"));
    let category = |id: i64| Some(CategoryId::parse(id).expect("a category"));
    // Case folded beyond ASCII: `ZOË` and `zoë` name the same pets.
    for asked in ["zo", "ZO", "Zo"] {
        let found = search(
            &fixture,
            None,
            PetSearch {
                name: prefix(asked),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(found, ["Zoë", "zorro", "ZOLTAN"], "{asked}");
    }
    let found = search(
        &fixture,
        None,
        PetSearch {
            name: prefix("ZOË"),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(found, ["Zoë"]);
    let found = search(
        &fixture,
        None,
        PetSearch {
            category_id: category(1),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(found, ["Zoë", "ZOLTAN", "Rex"]);
    let found = search(
        &fixture,
        None,
        PetSearch {
            tag: tag("DOG"),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(found, ["zorro", "ZOLTAN", "Rex"]);
    let all_three = PetSearch {
        category_id: category(1),
        tag: tag("dog"),
        name: prefix("zo"),
    };
    assert_eq!(search(&fixture, None, all_three.clone()).await, ["ZOLTAN"]);
    assert!(search(&fixture, Some(PetStatus::Sold), all_three)
        .await
        .is_empty());

    // Paged: two at a time, from where the last page ended, every match once.
    let dogs = PetSearch {
        tag: tag("dog"),
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut after: Option<PetId> = None;
    loop {
        let page = fixture
            .repo()
            .list(None, &dogs, after, 2)
            .await
            .expect("a page");
        seen.extend(page.iter().map(|pet| pet.name().as_str().to_owned()));
        match page.last() {
            Some(last) if page.len() == 2 => after = Some(last.id()),
            _ => break,
        }
    }
    assert_eq!(seen, ["zorro", "ZOLTAN", "Rex"]);
}

async fn a_search_by_name_pages_in_name_order_every_match_once(fixture: Fixture) {
    for (name, category) in [
        ("Rex", 1),
        ("rexa", 2),
        ("Bella", 1),
        ("REX", 2),
        ("Ré", 1),
        ("rex", 1),
        ("Rey", 2),
    ] {
        create(&fixture, name, category, PetDetails::default()).await;
    }
    let removed = create(&fixture, "Rexi", 1, PetDetails::default()).await;
    PetService::new(fixture.repo_arc(), Arc::new(SystemClock))
        .remove_pet(removed.id(), None)
        .await
        .expect("removed");
    let by_name = |prefix: &str, category: Option<i64>| PetSearch {
        name: Some(NamePrefix::parse(prefix).expect("a prefix")),
        category_id: category.map(|id| CategoryId::parse(id).expect("a category")),
        ..Default::default()
    };
    let pages = |search: PetSearch, size: usize| {
        let fixture = &fixture;
        async move {
            let mut seen = Vec::new();
            let mut after: Option<NamePosition> = None;
            loop {
                let page = fixture
                    .repo()
                    .list_by_name(None, &search, after.clone(), size)
                    .await
                    .expect("a page");
                seen.extend(
                    page.iter()
                        .map(|pet| (pet.name().as_str().to_owned(), pet.id())),
                );
                match page.last() {
                    Some(last) if page.len() == size => after = Some(NamePosition::of(last)),
                    _ => break,
                }
            }
            seen
        }
    };
    // By folded name, code point by code point, then by id: the three `rex` in creation order.
    let names = |seen: Vec<(String, PetId)>| -> Vec<String> {
        seen.into_iter().map(|(name, _)| name).collect()
    };
    let expected = ["Rex", "REX", "rex", "rexa", "Rey", "Ré"];
    for size in [1, 2, 4, 100] {
        assert_eq!(
            names(pages(by_name("R", None), size).await),
            expected,
            "{size}"
        );
    }
    assert_eq!(
        names(pages(by_name("r", Some(1)), 2).await),
        ["Rex", "rex", "Ré"]
    );
    let found = fixture
        .repo()
        .list_by_name(Some(PetStatus::Sold), &by_name("re", None), None, 10)
        .await
        .expect("a page");
    assert!(found.is_empty());
    // After a position that no pet holds (its pet renamed meanwhile): the next one on.
    let after = NamePosition {
        folded_name: "rex".to_owned(),
        id: PetId::new(i64::MAX),
    };
    let rest = fixture
        .repo()
        .list_by_name(None, &by_name("r", None), Some(after), 10)
        .await
        .expect("a page");
    let rest: Vec<&str> = rest.iter().map(|pet| pet.name().as_str()).collect();
    assert_eq!(rest, ["rexa", "Rey", "Ré"]);
}

async fn an_order_keeps_the_price_its_pet_had(fixture: Fixture) {
    let rex = create(&fixture, "Rex", 1, details("12.5", &[])).await;
    let staff = Caller::new(
        KeyId::parse(&"5".repeat(32)).expect("a key id"),
        KeyScope::Store,
    );
    let orders = OrderService::new(fixture.orders_arc(), Arc::new(SystemClock));
    let order = orders
        .place(&staff, NewOrder::new(rex.id(), OrderQuantity::ONE), None)
        .await
        .map(done)
        .expect("place");
    assert_eq!(order.price().map(|p| p.amount()).as_deref(), Some("12.50"));
    let pets = PetService::new(fixture.repo_arc(), Arc::new(SystemClock));
    let dearer = PetChange::new(PetChangeFields {
        price: Patch::Set(Price::parse("99", "EUR").expect("a price")),
        ..Default::default()
    })
    .expect("a change");
    pets.update_pet(rex.id(), dearer, None, None)
        .await
        .map(done)
        .expect("change");
    let kept = orders.get(&staff, order.id()).await.expect("the order");
    assert_eq!(kept.price().map(|p| p.amount()).as_deref(), Some("12.50"));
}

/// A pet written by a release that did not fold names (`name_folded` empty) is found by the name
/// search once the service has started again: the start folds what is missing.
async fn names_written_without_their_fold_are_folded_at_the_next_start(fixture: Fixture) {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;

    create(&fixture, "Zoë", 1, PetDetails::default()).await;
    let forget = "UPDATE pets SET name_folded = NULL";
    let url = fixture.url();
    match url.strip_prefix("sqlite://") {
        Some(path) => diesel::SqliteConnection::establish(path)
            .expect("a connection")
            .batch_execute(forget),
        None => diesel::PgConnection::establish(url)
            .expect("a connection")
            .batch_execute(forget),
    }
    .expect("the fold forgotten");
    let zo = || PetSearch {
        name: Some(NamePrefix::parse("zo").expect("a prefix")),
        ..Default::default()
    };
    assert!(search(&fixture, None, zo()).await.is_empty());
    petstore_persistence::migrate(
        &common::parse(url),
        &petstore_persistence::PoolSettings::default(),
    )
    .expect("a start");
    assert_eq!(search(&fixture, None, zo()).await, ["Zoë"]);
}
