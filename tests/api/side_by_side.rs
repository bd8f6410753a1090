//! Two releases side by side during a rollout: the next release's migrations only expand the
//! schema (new tables, new nullable or defaulted columns, new indexes, built without locking
//! writers out), so the release still serving keeps answering while they are applied, and still
//! starts on the expanded schema (an old instance restarted mid-rollout). Contracting (dropping
//! or renaming what the old release reads) waits for a later release (docs/deployment.md,
//! Migrations and rolling deploys).

use std::cell::{Cell, RefCell};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;

use petstore_test_support::{eventually, try_send, Backend, TestApp};

/// What a next release would add: the shapes of a table, nullable and defaulted columns (one on
/// orders), and its version recorded as diesel records an applied migration.
const EXPAND: &str = "BEGIN; \
    CREATE TABLE next_release_idempotency (api_key_id TEXT NOT NULL, key TEXT NOT NULL, \
        response BYTEA, created_at BIGINT NOT NULL, PRIMARY KEY (api_key_id, key)); \
    ALTER TABLE pets ADD COLUMN nickname TEXT; \
    ALTER TABLE pets ADD COLUMN colour TEXT NOT NULL DEFAULT ''; \
    ALTER TABLE orders ADD COLUMN delivery_note TEXT; \
    INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000000'); \
    COMMIT;";
const EXPAND_INDEX: &str = "CREATE INDEX CONCURRENTLY pets_by_name ON pets (name)";

/// Runs `sql` with psql on a thread of its own, so the clients keep sending meanwhile.
async fn psql(url: &str, sql: &'static str) {
    let url = url.to_owned();
    let output = actix_web::rt::task::spawn_blocking(move || {
        std::process::Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", &url, "-c", sql])
            .output()
            .expect("run psql")
    })
    .await
    .expect("the psql thread");
    assert!(output.status.success(), "{sql}: {output:?}");
}

#[actix_web::test]
async fn an_expand_only_migration_under_traffic_breaks_nothing_and_the_old_release_restarts() {
    let mut app = TestApp::builder(Backend::Postgres)
        .setting("PETSTORE_DRAIN_DELAY", "0s")
        .in_a_process()
        .spawn()
        .await;
    let stop = Cell::new(false);
    let failures = RefCell::new(Vec::new());
    let answered = Cell::new(0_usize);
    let client = |n: usize| {
        let (app, stop, failures, answered) = (&app, &stop, &failures, &answered);
        async move {
            let mut round = 0;
            while !stop.get() {
                round += 1;
                let body = json!({"name": format!("c{n}-{round}"), "categoryId": 1}).to_string();
                let created = try_send(app.post_json("/v1/pets"), Some(body)).await;
                let listed = try_send(app.get("/v1/pets?limit=20"), None).await;
                for (what, result, expected) in [("create", created, 201), ("list", listed, 200)] {
                    match result {
                        Ok(response) if response.status == expected => {
                            answered.set(answered.get() + 1);
                        }
                        Ok(response) => failures
                            .borrow_mut()
                            .push(format!("{what}: {} {}", response.status, response.body)),
                        Err(error) => failures.borrow_mut().push(format!("{what}: {error}")),
                    }
                }
            }
        }
    };
    let answers = async |count: usize| {
        eventually(
            Duration::from_secs(30),
            &format!("{count} answers"),
            async || match answered.get() {
                enough if enough >= count => Ok(()),
                so_far => Err(format!(
                    "{so_far} answers, {} failures",
                    failures.borrow().len()
                )),
            },
        )
        .await;
    };
    let migrate = async {
        answers(200).await;
        let url = app.postgres().url().to_owned();
        psql(&url, EXPAND).await;
        psql(&url, EXPAND_INDEX).await;
        answers(answered.get() + 200).await;
        stop.set(true);
    };
    futures_util::future::join(join_all((0..8).map(client)), migrate).await;
    assert_eq!(failures.take(), Vec::<String>::new(), "requests failed");

    // The old release restarts on the expanded schema (a migration it does not know is
    // recorded) and serves what was written before and after.
    app.terminate();
    app.restart();
    let count = app
        .postgres()
        .query_value("SELECT count(*) FROM pets WHERE colour = ''");
    let created = app
        .create_pet(json!({"name": "After", "categoryId": 2}))
        .await;
    assert_eq!(created["name"], "After");
    assert_eq!(
        created.as_object().map(|pet| pet.len()),
        Some(4),
        "the old release shows only the fields it knows: {created}"
    );
    let listed = app.list_following_next_links("/v1/pets?limit=100").await;
    assert_eq!(
        listed.len(),
        count.parse::<usize>().expect("a count") + 1,
        "every pet written during the migration is there"
    );
}
