//! The category repository contract, written once and run against every adapter (memory, a
//! SQLite file, a PostgreSQL database of its own per test): increasing ids, names unique among
//! the live categories regardless of case (under concurrency too), a removal that no read sees
//! and that frees the name, and keyed writes answered from their record.

mod common;

use std::sync::Arc;

use common::{done, Fixture};
use futures_util::future::join_all;
use petstore_application::{
    CategoryError, CategoryRepository, Fingerprint, RecordPlan, StoredResponse, Written,
};
use petstore_domain::{Category, CategoryId, CategoryName, IdempotencyKey, KeyId};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    categories_get_increasing_ids_and_are_found_and_listed_by_id,
    names_are_unique_regardless_of_case,
    a_rename_keeps_the_id_and_frees_the_old_name,
    a_removed_category_is_gone_for_every_read_and_its_name_is_free,
    concurrent_creates_of_one_name_give_exactly_one_category,
    a_keyed_create_is_answered_from_its_record_also_in_place_of_name_taken,
);

fn name(raw: &str) -> CategoryName {
    CategoryName::parse(raw).expect("a valid name")
}

fn id(value: i64) -> CategoryId {
    CategoryId::parse(value).expect("a valid id")
}

async fn create(repo: &dyn CategoryRepository, raw: &str) -> Category {
    done(repo.create(name(raw), None).await.expect("created"))
}

fn names(categories: &[Category]) -> Vec<&str> {
    categories
        .iter()
        .map(|category| category.name().as_str())
        .collect()
}

async fn categories_get_increasing_ids_and_are_found_and_listed_by_id(fixture: Fixture) {
    let repo = fixture.categories_arc();
    let dogs = create(repo.as_ref(), "Dogs").await;
    let cats = create(repo.as_ref(), "Cats").await;
    let birds = create(repo.as_ref(), "Birds").await;
    assert!(dogs.id() < cats.id() && cats.id() < birds.id());
    assert_eq!(dogs.name().as_str(), "Dogs");

    assert_eq!(
        repo.find(cats.id()).await.expect("storage answers"),
        Some(cats.clone())
    );
    assert_eq!(repo.find(id(999_999)).await.expect("storage answers"), None);

    let all = repo.list(None, 10).await.expect("storage answers");
    assert_eq!(names(&all), ["Dogs", "Cats", "Birds"]);
    let first_two = repo.list(None, 2).await.expect("storage answers");
    assert_eq!(names(&first_two), ["Dogs", "Cats"]);
    let after_cats = repo
        .list(Some(cats.id()), 10)
        .await
        .expect("storage answers");
    assert_eq!(after_cats, [birds]);
}

async fn names_are_unique_regardless_of_case(fixture: Fixture) {
    let repo = fixture.categories_arc();
    let dogs = create(repo.as_ref(), "Écureuils").await;
    let cats = create(repo.as_ref(), "Cats").await;
    for taken in ["Écureuils", "ÉCUREUILS", "écureuils"] {
        let err = repo.create(name(taken), None).await.expect_err("refused");
        assert!(
            matches!(&err, CategoryError::NameTaken(named) if named.as_str() == taken),
            "{taken}: {err}"
        );
    }
    let err = repo
        .rename(cats.id(), Some(name("ÉCUREUILS")), None)
        .await
        .expect_err("refused");
    assert!(matches!(err, CategoryError::NameTaken(_)), "{err}");
    // A category may take its own name in another case.
    let recased = done(
        repo.rename(dogs.id(), Some(name("ÉCUREUILS")), None)
            .await
            .expect("storage answers"),
    );
    assert_eq!(recased.name().as_str(), "ÉCUREUILS");
    let all = repo.list(None, 10).await.expect("storage answers");
    assert_eq!(names(&all), ["ÉCUREUILS", "Cats"]);
}

async fn a_rename_keeps_the_id_and_frees_the_old_name(fixture: Fixture) {
    let repo = fixture.categories_arc();
    let dogs = create(repo.as_ref(), "Dogs").await;
    let hounds = done(
        repo.rename(dogs.id(), Some(name("Hounds")), None)
            .await
            .expect("storage answers"),
    );
    assert_eq!(hounds.id(), dogs.id());
    assert_eq!(
        repo.find(dogs.id()).await.expect("storage answers"),
        Some(hounds.clone())
    );
    let unchanged = done(
        repo.rename(dogs.id(), None, None)
            .await
            .expect("storage answers"),
    );
    assert_eq!(unchanged, hounds);
    let again = create(repo.as_ref(), "dogs").await;
    assert!(again.id() > dogs.id());
    let err = repo
        .rename(id(999_999), Some(name("Cats")), None)
        .await
        .expect_err("refused");
    assert!(matches!(err, CategoryError::NotFound(missing) if missing == id(999_999)));
}

async fn a_removed_category_is_gone_for_every_read_and_its_name_is_free(fixture: Fixture) {
    let repo = fixture.categories_arc();
    let dogs = create(repo.as_ref(), "Dogs").await;
    let cats = create(repo.as_ref(), "Cats").await;
    assert_eq!(
        repo.remove(dogs.id(), 1_900_000_000)
            .await
            .expect("storage answers"),
        dogs
    );

    assert_eq!(repo.find(dogs.id()).await.expect("storage answers"), None);
    assert_eq!(
        repo.list(None, 10).await.expect("storage answers"),
        std::slice::from_ref(&cats)
    );
    for err in [
        repo.remove(dogs.id(), 1_900_000_001)
            .await
            .expect_err("refused"),
        repo.rename(dogs.id(), Some(name("Hounds")), None)
            .await
            .expect_err("refused"),
    ] {
        assert!(matches!(err, CategoryError::NotFound(_)), "{err}");
    }
    // The name is free again; the new category gets a new id, never the removed one's.
    let dogs_again = create(repo.as_ref(), "DOGS").await;
    assert!(dogs_again.id() > cats.id());
    assert_eq!(
        names(&repo.list(None, 10).await.expect("storage answers")),
        ["Cats", "DOGS"]
    );
}

async fn concurrent_creates_of_one_name_give_exactly_one_category(fixture: Fixture) {
    let repo: Arc<dyn CategoryRepository> = fixture.categories_arc();
    let attempts = (0..12).map(|at| {
        let repo = Arc::clone(&repo);
        // Every case of one name, so only the fold makes them one.
        let raw = if at % 2 == 0 {
            "Sea birds"
        } else {
            "SEA BIRDS"
        };
        tokio::spawn(async move { repo.create(name(raw), None).await })
    });
    let outcomes: Vec<_> = join_all(attempts)
        .await
        .into_iter()
        .map(|joined| joined.expect("the task ran"))
        .collect();
    let created = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    let taken = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(CategoryError::NameTaken(_))))
        .count();
    assert_eq!((created, taken), (1, 11), "{outcomes:?}");
    assert_eq!(repo.list(None, 10).await.expect("storage answers").len(), 1);
}

/// The plan of a keyed request made `later` seconds after the first: a retry comes later, and
/// its record differs from the one stored first in when it was made.
fn plan_at(key: &str, later: i64) -> RecordPlan<Category> {
    let stored_at = 1_900_000_000 + later;
    RecordPlan {
        owner: KeyId::parse(&"6".repeat(32)).expect("a key id"),
        key: IdempotencyKey::parse(key).expect("a key"),
        fingerprint: Fingerprint([5; 32]),
        stored_at,
        expired_before: stored_at - 86_400,
        render: |category: &Category| StoredResponse {
            status: 201,
            headers: Vec::new(),
            body: format!("{{\"id\":{}}}", category.id()).into_bytes(),
        },
    }
}

async fn a_keyed_create_is_answered_from_its_record_also_in_place_of_name_taken(fixture: Fixture) {
    let repo = fixture.categories_arc();
    let Written::Done(first, Some(response)) = repo
        .create(name("Dogs"), Some(plan_at("create-dogs", 0)))
        .await
        .expect("storage answers")
    else {
        panic!("the first keyed create is carried out and recorded");
    };
    assert_eq!(
        response.body,
        format!("{{\"id\":{}}}", first.id()).into_bytes()
    );
    // The retry finds its own name taken: it is answered from the record, not refused.
    let Written::Earlier(record) = repo
        .create(name("Dogs"), Some(plan_at("create-dogs", 1)))
        .await
        .expect("storage answers")
    else {
        panic!("the retry is answered from the record");
    };
    assert_eq!(record.response, response);
    // Another name under the same key is answered from the record too, and stores nothing.
    let other = repo
        .create(name("Cats"), Some(plan_at("create-dogs", 2)))
        .await;
    assert!(matches!(other, Ok(Written::Earlier(_))), "{other:?}");
    assert_eq!(
        repo.list(None, 10).await.expect("storage answers"),
        std::slice::from_ref(&first)
    );
    // A keyed rename is recorded the same way; its retry within the same second renames to
    // the name the category has, which renders the very response recorded, and is still
    // answered from the record.
    let renamed = repo
        .rename(
            first.id(),
            Some(name("Hounds")),
            Some(plan_at("rename-dogs", 3)),
        )
        .await
        .expect("storage answers");
    assert!(matches!(renamed, Written::Done(_, Some(_))), "{renamed:?}");
    let retried = repo
        .rename(
            first.id(),
            Some(name("Hounds")),
            Some(plan_at("rename-dogs", 3)),
        )
        .await
        .expect("storage answers");
    assert!(matches!(retried, Written::Earlier(_)), "{retried:?}");
}
