//! A real outage: the throwaway cluster is stopped under a live repository and started again.
//! A test binary of its own, because stopping the cluster would fail any other PostgreSQL test
//! running at that moment (cargo runs test binaries one after another).

mod common;

use std::time::{Duration, Instant};

use common::{new_pet, parse};
use petstore_application::RepositoryError;
use petstore_persistence::PoolSettings;
use petstore_test_support::{ClusterControl, TestDatabase};

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
    let repo = petstore_persistence::open(&parse(database.url()), &settings).expect("open");
    let before = repo.create(new_pet("Rex", 1, None)).await.expect("create");

    let stopped = cluster.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let result = repo.find(before.id).await;
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
    let created = repo.create(new_pet("Tom", 1, None)).await;
    assert!(
        matches!(created, Err(RepositoryError::Unavailable(_))),
        "{created:?}"
    );
    stopped.start();

    // Same repository, same pool: it serves again without being rebuilt.
    let deadline = Instant::now() + Duration::from_secs(10);
    let found = loop {
        match repo.find(before.id).await {
            Ok(found) => break found,
            Err(err) if Instant::now() < deadline => {
                eprintln!("not back yet: {err}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(err) => panic!("still failing after the restart: {err:?}"),
        }
    };
    assert_eq!(found, Some(before));
    repo.create(new_pet("Polly", 1, None))
        .await
        .expect("create after the restart");
    repo.ping().await.expect("ping after the restart");
}
