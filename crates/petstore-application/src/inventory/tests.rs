//! The inventory use case against a mocked repository and a clock the tests move: a count
//! answers for less than a second, is counted again after, is never kept when it failed; and
//! against a repository whose count waits for the test: one count at a time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::lock::Mutex as AsyncMutex;
use petstore_domain::{Inventory, PetStatus};

use super::*;
use crate::MockClock;

/// A clock that says what the test last set.
#[derive(Clone)]
struct TestClock(Arc<Mutex<SystemTime>>);

impl TestClock {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(
            UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        )))
    }

    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }

    fn set_back(&self, by: Duration) {
        *self.0.lock().unwrap() -= by;
    }

    fn port(&self) -> Arc<MockClock> {
        let now = Arc::clone(&self.0);
        let mut clock = MockClock::new();
        clock.expect_now().returning(move || *now.lock().unwrap());
        Arc::new(clock)
    }
}

fn available(count: u64) -> Inventory {
    Inventory::from_counts([(PetStatus::Available, count)])
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable("pool timed out".into())
}

/// A repository answering `counts` in turn, each once.
fn counting(counts: Vec<Result<Inventory, RepositoryError>>) -> MockInventoryRepository {
    let mut repository = MockInventoryRepository::new();
    let mut counts = counts.into_iter();
    let times = counts.len();
    repository
        .expect_count_by_status()
        .times(times)
        .returning(move || counts.next().expect("no more counts than expected"));
    repository
}

fn service(repository: MockInventoryRepository, clock: &TestClock) -> InventoryService {
    InventoryService::new(Arc::new(repository), clock.port())
}

#[tokio::test]
async fn the_first_request_counts_and_answers_the_count() {
    let clock = TestClock::new();
    let service = service(counting(vec![Ok(available(12))]), &clock);
    assert_eq!(service.inventory().await.unwrap(), available(12));
}

#[tokio::test]
async fn a_count_answers_for_less_than_a_second_without_storage() {
    let clock = TestClock::new();
    let service = service(counting(vec![Ok(available(12))]), &clock);
    service.inventory().await.unwrap();
    clock.advance(Duration::from_millis(999));
    assert_eq!(service.inventory().await.unwrap(), available(12));
    assert_eq!(service.clone().inventory().await.unwrap(), available(12));
}

#[tokio::test]
async fn a_count_a_second_old_is_counted_again() {
    let clock = TestClock::new();
    let service = service(
        counting(vec![
            Ok(available(12)),
            Ok(available(13)),
            Ok(available(14)),
        ]),
        &clock,
    );
    service.inventory().await.unwrap();
    clock.advance(MAX_AGE);
    assert_eq!(service.inventory().await.unwrap(), available(13));
    clock.advance(Duration::from_millis(500));
    assert_eq!(service.inventory().await.unwrap(), available(13));
    clock.advance(Duration::from_secs(60));
    assert_eq!(service.inventory().await.unwrap(), available(14));
}

#[tokio::test]
async fn a_clock_set_back_counts_again() {
    let clock = TestClock::new();
    let service = service(counting(vec![Ok(available(1)), Ok(available(2))]), &clock);
    service.inventory().await.unwrap();
    clock.set_back(Duration::from_secs(5));
    assert_eq!(service.inventory().await.unwrap(), available(2));
}

#[tokio::test]
async fn a_failed_count_is_passed_on_and_the_next_request_counts() {
    let clock = TestClock::new();
    let service = service(counting(vec![Err(unavailable()), Ok(available(3))]), &clock);
    assert!(matches!(
        service.inventory().await,
        Err(RepositoryError::Unavailable(_))
    ));
    assert_eq!(service.inventory().await.unwrap(), available(3));
}

#[tokio::test]
async fn a_failed_recount_is_passed_on_rather_than_a_stale_count() {
    let clock = TestClock::new();
    let service = service(
        counting(vec![Ok(available(3)), Err(unavailable()), Ok(available(4))]),
        &clock,
    );
    service.inventory().await.unwrap();
    clock.advance(MAX_AGE);
    assert!(service.inventory().await.is_err());
    assert_eq!(service.inventory().await.unwrap(), available(4));
}

/// A repository whose counts wait until the test opens the gate, saying how many began.
struct GatedRepository {
    gate: Arc<AsyncMutex<()>>,
    started: AtomicUsize,
    answer: Mutex<u64>,
}

#[async_trait::async_trait]
impl InventoryRepository for GatedRepository {
    async fn count_by_status(&self) -> Result<Inventory, RepositoryError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let _open = self.gate.lock().await;
        Ok(available(*self.answer.lock().unwrap()))
    }
}

impl GatedRepository {
    fn new(gate: &Arc<AsyncMutex<()>>, answer: u64) -> Arc<Self> {
        Arc::new(Self {
            gate: Arc::clone(gate),
            started: AtomicUsize::new(0),
            answer: Mutex::new(answer),
        })
    }

    fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    async fn until_started(&self, count: usize) {
        while self.started() < count {
            tokio::task::yield_now().await;
        }
    }
}

#[tokio::test]
async fn while_one_request_counts_again_the_others_get_the_count_before() {
    let clock = TestClock::new();
    let gate = Arc::new(AsyncMutex::new(()));
    let repository = GatedRepository::new(&gate, 7);
    let service = InventoryService::new(repository.clone(), clock.port());
    service.inventory().await.unwrap();

    *repository.answer.lock().unwrap() = 8;
    clock.advance(MAX_AGE);
    let closed = gate.lock().await;
    let counting = tokio::spawn({
        let service = service.clone();
        async move { service.inventory().await }
    });
    repository.until_started(2).await;
    for _ in 0..3 {
        assert_eq!(service.inventory().await.unwrap(), available(7));
    }
    assert_eq!(repository.started(), 2, "one count at a time");

    drop(closed);
    assert_eq!(counting.await.unwrap().unwrap(), available(8));
    assert_eq!(service.inventory().await.unwrap(), available(8));
    assert_eq!(repository.started(), 2);
}

#[tokio::test]
async fn requests_before_the_first_count_wait_for_it_and_share_it() {
    let clock = TestClock::new();
    let gate = Arc::new(AsyncMutex::new(()));
    let repository = GatedRepository::new(&gate, 5);
    let service = InventoryService::new(repository.clone(), clock.port());

    let closed = gate.lock().await;
    let waiting: Vec<_> = (0..4)
        .map(|_| {
            let service = service.clone();
            tokio::spawn(async move { service.inventory().await })
        })
        .collect();
    repository.until_started(1).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(waiting.iter().all(|request| !request.is_finished()));

    drop(closed);
    for request in waiting {
        assert_eq!(request.await.unwrap().unwrap(), available(5));
    }
    assert_eq!(
        repository.started(),
        1,
        "the waiting requests share one count"
    );
}
