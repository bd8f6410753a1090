//! The README's walk-through, run as written against the built binary on a fresh SQLite server,
//! and pasted a second time into the same data, as a reader trying it again would (the runner:
//! `petstore_test_support::run_readme_walk_through`).

use petstore_test_support::{
    petstore_binary, run_readme_walk_through, Backend, TestApp, WalkThroughTarget,
};

/// Runs the walk-through once against `app`, with the `petstore` command on its data.
fn paste_the_walk_through(app: &TestApp) {
    let data_dir = app.data_dir.path().to_str().expect("a UTF-8 path");
    run_readme_walk_through(&WalkThroughTarget {
        base: &app.address,
        bin_dir: petstore_binary().parent().expect("the binary's directory"),
        working_dir: app.data_dir.path(),
        env: &[
            ("PETSTORE_DATA_DIR", data_dir),
            ("DATABASE_URL", &app.database_url),
        ],
    });
}

#[actix_web::test]
async fn the_readme_walk_through_runs_as_written_and_prints_what_it_shows() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    paste_the_walk_through(&app);
}

#[actix_web::test]
async fn the_readme_walk_through_pasted_again_into_the_same_data_prints_what_it_shows_again() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    paste_the_walk_through(&app);
    paste_the_walk_through(&app);
}
