//! A real outage: the throwaway cluster is stopped under a live repository and started again.
//! A test binary of its own, because stopping the cluster would fail any other PostgreSQL test
//! running at that moment (cargo runs test binaries one after another).

mod common;

use petstore_domain::PetSearch;
use std::time::{Duration, Instant};

use common::{done, new_pet, parse};
use petstore_application::RepositoryError;
use petstore_persistence::PoolSettings;
use petstore_test_database::{eventually, ClusterControl, TestDatabase};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_fail_fast_while_the_server_is_down_and_succeed_once_it_is_back() {
    let cluster = ClusterControl::acquire();
    let database = TestDatabase::create();
    let settings = PoolSettings {
        max_size: 4,
        checkout_timeout: Duration::from_secs(1),
        connect_timeout: Duration::from_secs(1),
        statement_timeout: Duration::from_secs(1),
        ..PoolSettings::default()
    };
    let repo = petstore_persistence::open(&parse(database.url()), &settings)
        .expect("open")
        .pets;
    let before = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");

    let stopped = cluster.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let result = repo.find(before.id()).await;
        assert!(
            matches!(result, Err(RepositoryError::Unavailable(_))),
            "{result:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
    }
    let created = repo.create(new_pet("Tom", 1, None), None).await.map(done);
    assert!(
        matches!(created, Err(RepositoryError::Unavailable(_))),
        "{created:?}"
    );
    stopped.start();

    // Same repository, same pool: it serves again without being rebuilt.
    let found = eventually(
        Duration::from_secs(10),
        "the pet found again after the restart",
        async || repo.find(before.id()).await,
    )
    .await;
    assert_eq!(found, Some(before));
    repo.create(new_pet("Polly", 1, None), None)
        .await
        .map(done)
        .expect("create after the restart");
    repo.ping().await.expect("ping after the restart");
}

/// Waits until the store is ready (a ping succeeds), within 2 s.
async fn once_ready(repo: &std::sync::Arc<dyn petstore_application::PetRepository>) {
    eventually(
        Duration::from_secs(2),
        "the store ready after the restart",
        async || repo.ping().await,
    )
    .await;
}

/// Connections are not pinged on checkout: after a restart, the first request to meet a closed
/// connection retires every connection of the old server and is tried once more on a new one,
/// so no caller sees the restart once the server is back. "Back" is when the store can know it:
/// a restart slow enough for the probe to notice is reported (503) until the probe's next retry,
/// within its 250 ms, as readiness would tell a load balancer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_the_first_create_and_the_first_read_succeed_on_new_connections() {
    let cluster = ClusterControl::acquire();
    let database = TestDatabase::create();
    let settings = PoolSettings {
        max_size: 4,
        checkout_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        ..PoolSettings::default()
    };
    let repo = petstore_persistence::open(&parse(database.url()), &settings)
        .expect("open")
        .pets;
    let rex = repo
        .create(new_pet("Rex", 1, None), None)
        .await
        .map(done)
        .expect("create");
    let warm = futures_util::future::join_all((0..4).map(|_| repo.find(rex.id()))).await;
    assert!(warm.iter().all(Result::is_ok), "{warm:?}");

    cluster.stop().start();
    once_ready(&repo).await;
    let tom = repo
        .create(new_pet("Tom", 1, None), None)
        .await
        .map(done)
        .expect("the first create after a restart");

    cluster.stop().start();
    once_ready(&repo).await;
    let found = repo
        .find(tom.id())
        .await
        .expect("the first read after a restart");
    assert_eq!(found, Some(tom));
    assert_eq!(
        repo.list(None, &PetSearch::default(), None, 10)
            .await
            .expect("list")
            .len(),
        2
    );
}
