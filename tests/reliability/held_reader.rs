//! A read held open on a large SQLite database under load: 1,000,000 pets, 12 clients creating
//! and 4 listing, and beside the server a connection holding `BEGIN; SELECT count(*) FROM pets;`
//! for 12 s, as a slow backup, a `.dump` or an operator's query would. While it holds, creates
//! go on as before (createPet p99 under 100 ms, none taking a second), and once it ends the WAL
//! is started over. Without it, the WAL stays within its usual size under that load.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::future::join_all;

use petstore_test_support::sqlite_wal::{wal_generation, wal_pages, HeldRead};
use petstore_test_support::timed_creates::{create_until_stopped, p99, sent_within, Timings};
use petstore_test_support::{send, Backend, TestApp};

const PETS: u64 = 1_000_000;
const CREATING: usize = 12;
const LISTING: usize = 4;
/// Load before the read begins, for comparison.
const BEFORE: Duration = Duration::from_secs(4);
const HOLD: Duration = Duration::from_secs(12);
/// Load after the read ends, within which the WAL must have started over.
const AFTER: Duration = Duration::from_secs(4);

/// Pages the WAL file keeps at most once started over (`journal_size_limit`, 16 MiB).
const USUAL_WAL_PAGES: u64 = 4_072;

/// The most pages the WAL file had, looked at every 20 ms for `length`.
async fn largest_wal(database: &Path, length: Duration) -> u64 {
    let until = Instant::now() + length;
    let mut most = 0;
    while Instant::now() < until {
        most = most.max(wal_pages(database));
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    most
}

/// Creates answered in one phase of the scenario.
struct Phase {
    name: &'static str,
    from: Instant,
    to: Instant,
}

fn summary(phase: &Phase, creates: &[(Instant, Duration)]) -> (usize, Duration, Duration) {
    let during = sent_within(creates, &(phase.from..phase.to));
    assert!(!during.is_empty(), "no create was sent {}", phase.name);
    let p99 = p99(&during);
    let slowest = during[during.len() - 1];
    let per_second = during.len() as f64 / (phase.to - phase.from).as_secs_f64();
    eprintln!(
        "{:>14}: {:>6} creates ({per_second:>5.0}/s), p99 {p99:>10.1?}, slowest {slowest:>10.1?}",
        phase.name,
        during.len()
    );
    (during.len(), p99, slowest)
}

#[actix_web::test]
async fn a_read_held_for_12_s_on_a_million_pets_never_stalls_creates() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    let database = PathBuf::from(
        app.database_url
            .strip_prefix("sqlite://")
            .expect("a sqlite:// URL"),
    );
    let filled = Instant::now();
    app.execute_sql(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {PETS}) \
         INSERT INTO pets (name, category_id, status) \
         SELECT 'pet ' || i, 1 + i % 9, CASE i % 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' \
         ELSE 'sold' END FROM n;"
    ));
    eprintln!("{PETS} pets stored in {:?}", filled.elapsed());

    let stop = Cell::new(false);
    let creates = Timings::default();
    let listing = |l: usize| {
        let (app, stop) = (&app, &stop);
        async move {
            let statuses = ["available", "pending", "sold"];
            while !stop.get() {
                let response = send(
                    app.get(&format!("/v1/pets?status={}&limit=20", statuses[l % 3])),
                    None,
                )
                .await;
                assert_eq!(response.status.as_u16(), 200, "{}", response.body);
            }
        }
    };
    let scenario = async {
        let sleep = actix_web::rt::time::sleep;
        let start = Instant::now();
        // The first seconds copy the million pets' WAL into the database file; then the WAL
        // is started over again and again, within its usual size.
        sleep(BEFORE / 2).await;
        let most_before = largest_wal(&database, BEFORE / 2).await;
        let held = HeldRead::begin(&database);
        let held_since = Instant::now();
        sleep(HOLD).await;
        let held_pages = wal_pages(&database);
        let generation = wal_generation(&database);
        held.end();
        let held_until = Instant::now();
        let mut restarted = None;
        while held_until.elapsed() < AFTER {
            if restarted.is_none() && wal_generation(&database) != generation {
                restarted = Some(held_until.elapsed());
            }
            sleep(Duration::from_millis(20)).await;
        }
        stop.set(true);
        eprintln!(
            "WAL: {most_before} pages before the read, {held_pages} when it ended, started over \
             {restarted:?} after"
        );
        (
            most_before,
            [
                Phase {
                    name: "before the read",
                    from: start,
                    to: held_since,
                },
                Phase {
                    name: "while held",
                    from: held_since,
                    to: held_until,
                },
                Phase {
                    name: "after the read",
                    from: held_until,
                    to: Instant::now(),
                },
            ],
            restarted,
        )
    };
    let ((most_before, phases, restarted), _, _) = futures_util::future::join3(
        scenario,
        join_all((0..CREATING).map(|c| create_until_stopped(&app, c, &stop, &creates))),
        join_all((0..LISTING).map(listing)),
    )
    .await;

    let creates = creates.into_inner();
    let figures: Vec<_> = phases
        .iter()
        .map(|phase| summary(phase, &creates))
        .collect();
    let (_, p99, slowest) = figures[1];
    assert!(
        slowest < Duration::from_secs(1),
        "a create took {slowest:?}"
    );
    assert!(p99 < Duration::from_millis(100), "createPet p99 {p99:?}");
    assert!(
        most_before <= USUAL_WAL_PAGES,
        "with no read held, the WAL grew to {most_before} pages"
    );
    assert!(
        restarted.is_some(),
        "the WAL was not started over within {AFTER:?} of the read's end"
    );
}
