//! The category use cases against a mocked repository: what each asks of storage (a page's one
//! extra row, the removal's time) and what each answers for every outcome storage gives.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use mockall::predicate::eq;
use petstore_domain::{Category, CategoryId, CategoryName, PageLimit};

use super::*;
use crate::{MockClock, RepositoryError};

const NOW: i64 = 1_800_000_000;

fn id(value: i64) -> CategoryId {
    CategoryId::parse(value).unwrap()
}

fn name(raw: &str) -> CategoryName {
    CategoryName::parse(raw).unwrap()
}

fn category(value: i64, raw: &str) -> Category {
    Category::new(id(value), name(raw))
}

fn service(repository: MockCategoryRepository) -> CategoryService {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .return_const(UNIX_EPOCH + Duration::from_secs(NOW.unsigned_abs()));
    CategoryService::new(Arc::new(repository), Arc::new(clock))
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable("pool timed out".into())
}

#[tokio::test]
async fn a_page_reads_one_row_more_and_says_where_the_next_starts() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_list()
        .with(eq(Some(id(4))), eq(3))
        .return_once(|_, _| {
            Ok(vec![
                category(5, "Dogs"),
                category(6, "Cats"),
                category(9, "Birds"),
            ])
        });
    let page = service(repository)
        .list_categories(Some(id(4)), PageLimit::parse(2).unwrap())
        .await
        .unwrap();
    assert_eq!(page.categories, [category(5, "Dogs"), category(6, "Cats")]);
    assert_eq!(page.next_after, Some(id(6)));
}

#[tokio::test]
async fn the_last_page_has_no_next() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_list()
        .with(eq(None), eq(21))
        .return_once(|_, _| Ok(vec![category(1, "Dogs")]));
    let page = service(repository)
        .list_categories(None, PageLimit::DEFAULT)
        .await
        .unwrap();
    assert_eq!(page.categories, [category(1, "Dogs")]);
    assert_eq!(page.next_after, None);
}

#[tokio::test]
async fn a_listing_passes_storage_failures_on() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_list()
        .return_once(|_, _| Err(unavailable()));
    let err = service(repository)
        .list_categories(None, PageLimit::DEFAULT)
        .await
        .unwrap_err();
    assert!(matches!(err, RepositoryError::Unavailable(_)), "{err}");
}

#[tokio::test]
async fn get_answers_the_category_or_not_found_naming_the_id() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_find()
        .with(eq(id(3)))
        .return_once(|_| Ok(Some(category(3, "Dogs"))));
    repository
        .expect_find()
        .with(eq(id(4)))
        .return_once(|_| Ok(None));
    repository
        .expect_find()
        .with(eq(id(5)))
        .return_once(|_| Err(unavailable()));
    let service = service(repository);
    assert_eq!(
        service.get_category(id(3)).await.unwrap(),
        category(3, "Dogs")
    );
    let err = service.get_category(id(4)).await.unwrap_err();
    assert!(matches!(err, CategoryError::NotFound(missing) if missing == id(4)));
    assert_eq!(err.to_string(), "no category has the id 4");
    let err = service.get_category(id(5)).await.unwrap_err();
    assert!(matches!(err, CategoryError::Repository(_)), "{err}");
}

#[tokio::test]
async fn create_stores_the_name_and_answers_what_storage_did() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_create()
        .withf(|name, plan| name.as_str() == "Dogs" && plan.is_none())
        .return_once(|_, _| Ok(Written::Done(category(1, "Dogs"), None)));
    let written = service(repository)
        .create_category(name("Dogs"), None)
        .await
        .unwrap();
    assert_eq!(written.done(), Some(category(1, "Dogs")));
}

#[tokio::test]
async fn a_taken_name_is_refused_naming_it() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_create()
        .return_once(|name, _| Err(CategoryError::NameTaken(name)));
    let err = service(repository)
        .create_category(name("DOGS"), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a category named `DOGS` exists already (names are unique regardless of case)"
    );
}

#[tokio::test]
async fn update_renames_or_leaves_the_category_as_it_is() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_rename()
        .withf(|id_, name, _| {
            *id_ == id(2) && name.as_ref().map(CategoryName::as_str) == Some("Hounds")
        })
        .return_once(|_, _, _| Ok(Written::Done(category(2, "Hounds"), None)));
    repository
        .expect_rename()
        .withf(|id_, name, _| *id_ == id(3) && name.is_none())
        .return_once(|_, _, _| Ok(Written::Done(category(3, "Cats"), None)));
    repository
        .expect_rename()
        .withf(|id_, _, _| *id_ == id(4))
        .return_once(|id, _, _| Err(CategoryError::NotFound(id)));
    let service = service(repository);
    let renamed = service
        .update_category(id(2), Some(name("Hounds")), None)
        .await
        .unwrap();
    assert_eq!(renamed.done(), Some(category(2, "Hounds")));
    let unchanged = service.update_category(id(3), None, None).await.unwrap();
    assert_eq!(unchanged.done(), Some(category(3, "Cats")));
    let err = service
        .update_category(id(4), Some(name("Hounds")), None)
        .await
        .unwrap_err();
    assert!(matches!(err, CategoryError::NotFound(_)), "{err}");
}

#[tokio::test]
async fn remove_records_when_the_category_went() {
    let mut repository = MockCategoryRepository::new();
    repository
        .expect_remove()
        .with(eq(id(2)), eq(NOW))
        .return_once(|_, _| Ok(category(2, "Dogs")));
    repository
        .expect_remove()
        .with(eq(id(3)), eq(NOW))
        .return_once(|id, _| Err(CategoryError::NotFound(id)));
    let service = service(repository);
    assert_eq!(
        service.remove_category(id(2)).await.unwrap(),
        category(2, "Dogs")
    );
    let err = service.remove_category(id(3)).await.unwrap_err();
    assert!(matches!(err, CategoryError::NotFound(_)), "{err}");
}
