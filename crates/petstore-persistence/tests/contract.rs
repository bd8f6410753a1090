//! The repository contract, written once and run against every adapter: in memory, a SQLite
//! file, and a PostgreSQL database of its own per test (from `TEST_DATABASE_URL`; run with
//! `bash tests/support/with-postgres.sh cargo test -p petstore-persistence`).
//!
//! Backend-specific guarantees (durability across reopening, migrations, outages) live in
//! `sqlite.rs`, `postgres.rs` and `postgres_outage.rs` beside this file.

mod common;

use petstore_domain::PetSearch;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use common::{done, new_pet, Fixture};
use petstore_application::PetRepository;
use petstore_domain::{CategoryId, NewPet, PetId, PetName, PetStatus};

petstore_test_database::on_backends!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] crate::common::fixture,
    [memory, sqlite, postgres]
    create_assigns_increasing_distinct_ids_and_returns_the_stored_pet,
    create_stores_the_default_and_explicit_statuses,
    create_keeps_long_unicode_names_and_the_largest_category_id,
    find_unknown_id_is_none,
    find_many_returns_the_existing_pets_in_id_order,
    empty_store_lists_nothing,
    list_is_ordered_by_id_and_honours_max,
    list_filters_by_status,
    list_after_is_a_keyset_cursor,
    paging_with_after_visits_every_pet_once,
    two_hundred_concurrent_creates_get_distinct_ids_and_are_all_findable,
    ping_succeeds,
);

async fn create_assigns_increasing_distinct_ids_and_returns_the_stored_pet(fixture: Fixture) {
    let repo = fixture.repo();
    let mut last_id = None;
    for (name, category) in [("Rex", 3), ("Tom", 1), ("Polly", 7)] {
        let wanted = new_pet(name, category, Some(PetStatus::Pending));
        let created = repo
            .create(wanted.clone(), None)
            .await
            .map(done)
            .expect("create");
        assert_eq!(created.name(), wanted.name());
        assert_eq!(created.category_id(), wanted.category_id());
        assert_eq!(created.status(), PetStatus::Pending);
        if let Some(last) = last_id {
            assert!(created.id() > last, "{} after {last}", created.id());
        }
        last_id = Some(created.id());
        let found = repo.find(created.id()).await.expect("find");
        assert_eq!(found, Some(created));
    }
}

async fn create_stores_the_default_and_explicit_statuses(fixture: Fixture) {
    let repo = fixture.repo();
    let defaulted = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    assert_eq!(defaulted.status(), PetStatus::Available);
    for status in PetStatus::ALL {
        let created = repo
            .create(new_pet("Tom", 2, Some(status)), None)
            .await
            .map(done)
            .expect("create");
        assert_eq!(created.status(), status);
        let found = repo
            .find(created.id())
            .await
            .expect("find")
            .expect("stored");
        assert_eq!(found.status(), status);
    }
    let found = repo
        .find(defaulted.id())
        .await
        .expect("find")
        .expect("stored");
    assert_eq!(found.status(), PetStatus::Available);
}

async fn create_keeps_long_unicode_names_and_the_largest_category_id(fixture: Fixture) {
    let repo = fixture.repo();
    let name = "Ñandú 🐦 ".repeat(32).chars().take(255).collect::<String>();
    let wanted = NewPet::new(
        PetName::parse(name.clone()).expect("valid name"),
        CategoryId::parse(i64::MAX).expect("valid category"),
        Some(PetStatus::Sold),
    );
    let created = repo.create(wanted, None).await.map(done).expect("create");
    let found = repo
        .find(created.id())
        .await
        .expect("find")
        .expect("stored");
    assert_eq!(found.name().as_str(), name);
    assert_eq!(found.category_id().get(), i64::MAX);
}

async fn find_many_returns_the_existing_pets_in_id_order(fixture: Fixture) {
    let repo = fixture.repo();
    let mut created = Vec::new();
    for n in 0..30 {
        created.push(
            repo.create(new_pet(&format!("Pet {n}"), 1, None), None)
                .await
                .map(done)
                .expect("create"),
        );
    }
    let wanted = [&created[20], &created[3], &created[29], &created[3]];
    let mut ids: Vec<PetId> = wanted.iter().map(|pet| pet.id()).collect();
    ids.push(PetId::new(i64::MAX));
    let found = repo.find_many(&ids).await.expect("find_many");
    assert_eq!(
        found,
        vec![created[3].clone(), created[20].clone(), created[29].clone()]
    );
    assert_eq!(
        repo.find_many(&[PetId::new(-1)]).await.expect("find_many"),
        vec![]
    );
    // More than an inline read holds.
    let all: Vec<PetId> = created.iter().map(|pet| pet.id()).collect();
    assert_eq!(repo.find_many(&all).await.expect("find_many"), created);
}

async fn find_unknown_id_is_none(fixture: Fixture) {
    let repo = fixture.repo();
    let created = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    for id in [created.id().get() + 1, 0, -1, i64::MAX, i64::MIN] {
        assert_eq!(repo.find(PetId::new(id)).await.expect("find"), None, "{id}");
    }
}

async fn empty_store_lists_nothing(fixture: Fixture) {
    let repo = fixture.repo();
    assert!(repo
        .list(None, &PetSearch::default(), None, 20)
        .await
        .expect("list")
        .is_empty());
    assert!(repo
        .list(
            Some(PetStatus::Sold),
            &PetSearch::default(),
            Some(PetId::new(5)),
            20
        )
        .await
        .expect("list")
        .is_empty());
}

async fn list_is_ordered_by_id_and_honours_max(fixture: Fixture) {
    let repo = fixture.repo();
    let ids = create_many(repo, 5).await;
    let all = repo
        .list(None, &PetSearch::default(), None, 100)
        .await
        .expect("list");
    assert_eq!(all.iter().map(|p| p.id()).collect::<Vec<_>>(), ids);
    let first_three = repo
        .list(None, &PetSearch::default(), None, 3)
        .await
        .expect("list");
    assert_eq!(
        first_three.iter().map(|p| p.id()).collect::<Vec<_>>(),
        ids[..3]
    );
    assert!(repo
        .list(None, &PetSearch::default(), None, 0)
        .await
        .expect("list")
        .is_empty());
    assert_eq!(
        repo.list(None, &PetSearch::default(), None, usize::MAX)
            .await
            .expect("list")
            .len(),
        5
    );
}

async fn list_filters_by_status(fixture: Fixture) {
    let repo = fixture.repo();
    let statuses = [
        PetStatus::Available,
        PetStatus::Pending,
        PetStatus::Sold,
        PetStatus::Pending,
        PetStatus::Available,
        PetStatus::Pending,
    ];
    let mut created = Vec::new();
    for (i, status) in statuses.into_iter().enumerate() {
        let pet = repo
            .create(new_pet(&format!("pet {i}"), 1, Some(status)), None)
            .await
            .map(done)
            .expect("create");
        created.push(pet);
    }
    for status in PetStatus::ALL {
        let expected: Vec<_> = created
            .iter()
            .filter(|p| p.status() == status)
            .cloned()
            .collect();
        let listed = repo
            .list(Some(status), &PetSearch::default(), None, 100)
            .await
            .expect("list");
        assert_eq!(listed, expected, "{status}");
    }
    let two_pending = repo
        .list(Some(PetStatus::Pending), &PetSearch::default(), None, 2)
        .await
        .expect("list");
    assert_eq!(two_pending, vec![created[1].clone(), created[3].clone()]);
}

async fn list_after_is_a_keyset_cursor(fixture: Fixture) {
    let repo = fixture.repo();
    let ids = create_many(repo, 6).await;
    let rest = repo
        .list(None, &PetSearch::default(), Some(ids[1]), 100)
        .await
        .expect("list");
    assert_eq!(rest.iter().map(|p| p.id()).collect::<Vec<_>>(), ids[2..]);
    let next_two = repo
        .list(None, &PetSearch::default(), Some(ids[1]), 2)
        .await
        .expect("list");
    assert_eq!(
        next_two.iter().map(|p| p.id()).collect::<Vec<_>>(),
        ids[2..4]
    );
    assert!(repo
        .list(None, &PetSearch::default(), Some(ids[5]), 100)
        .await
        .expect("list")
        .is_empty());
    assert!(repo
        .list(None, &PetSearch::default(), Some(PetId::new(i64::MAX)), 100)
        .await
        .expect("list")
        .is_empty());
    let from_start = repo
        .list(None, &PetSearch::default(), Some(PetId::new(i64::MIN)), 100)
        .await
        .expect("list");
    assert_eq!(from_start.len(), 6);
    // `after` need not be an existing id, and combines with the status filter.
    let sold = repo
        .create(new_pet("late", 1, Some(PetStatus::Sold)), None)
        .await
        .map(done)
        .expect("create");
    let sold_after = repo
        .list(
            Some(PetStatus::Sold),
            &PetSearch::default(),
            Some(PetId::new(ids[0].get() - 1)),
            100,
        )
        .await
        .expect("list");
    assert_eq!(sold_after, vec![sold]);
}

async fn paging_with_after_visits_every_pet_once(fixture: Fixture) {
    let repo = fixture.repo();
    let ids = create_many(repo, 7).await;
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = repo
            .list(None, &PetSearch::default(), after, 2)
            .await
            .expect("list");
        let Some(last) = page.last() else { break };
        after = Some(last.id());
        seen.extend(page.iter().map(|p| p.id()));
    }
    assert_eq!(seen, ids);
}

async fn two_hundred_concurrent_creates_get_distinct_ids_and_are_all_findable(fixture: Fixture) {
    let repo = fixture.repo_arc();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let repo = Arc::clone(&repo);
        tasks.spawn(async move {
            repo.create(new_pet(&format!("pet {i}"), 1, None), None)
                .await
                .map(done)
        });
    }
    let mut ids = BTreeSet::new();
    while let Some(joined) = tasks.join_next().await {
        let pet = joined.expect("task").expect("create");
        assert!(ids.insert(pet.id()), "id {} handed out twice", pet.id());
    }
    eprintln!(
        "{}: 200 concurrent creates took {:?}",
        fixture.name(),
        started.elapsed()
    );
    assert_eq!(ids.len(), 200);
    for id in &ids {
        assert!(repo.find(*id).await.expect("find").is_some(), "{id}");
    }
    let listed = repo
        .list(None, &PetSearch::default(), None, 1000)
        .await
        .expect("list");
    assert_eq!(
        listed.iter().map(|p| p.id()).collect::<Vec<_>>(),
        ids.into_iter().collect::<Vec<_>>()
    );
}

async fn ping_succeeds(fixture: Fixture) {
    fixture.repo().ping().await.expect("ping");
}

/// Creates `count` pets and returns their ids in creation order.
async fn create_many(repo: &dyn PetRepository, count: usize) -> Vec<PetId> {
    let mut ids = Vec::new();
    for i in 0..count {
        let pet = repo
            .create(new_pet(&format!("pet {i}"), 1, None), None)
            .await
            .map(done)
            .expect("create");
        ids.push(pet.id());
    }
    ids
}
