//! The service under test, for the end-to-end suites (`tests/api`, `tests/outage`) and the load
//! benchmark: a [`TestApp`] on a free port against a fresh database, talked to over real HTTP.
//!
//! - [`TestApp::spawn`]: the library's `Application` in this process (on a thread with its own
//!   runtime): what most tests need, and fast.
//! - [`TestApp::builder`]: the backend, settings, extra keys, and whether to run the built
//!   `petstore` binary in a process of its own ([`TestAppBuilder::in_a_process`]) for what only a
//!   process has: `kill -9`, configuration from the environment, its own memory figures.
//! - [`on_backends!`]: one scenario, run on each backend listed.
//!
//! Storage for the tests (the throwaway PostgreSQL cluster, per-test databases) comes from
//! `petstore-test-database`, re-exported here as [`database`]; that crate stays free of the
//! server so the persistence crate's own tests can use it. Set `TEST_LOG=1` to see the servers'
//! logs.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    missing_debug_implementations
)]

mod app;
mod backend;

mod http;
mod in_process;
mod keys;
mod listing;
mod matrix;
mod process;
pub mod sqlite_wal;
mod startup_line;
pub mod stop_under_load;
pub mod timed_creates;
mod walk_through;
pub mod webhook_receiver;

pub use app::builder::TestAppBuilder;
pub use app::TestApp;
pub use backend::{backend_named, Backend, SERVER_WORKERS};
pub use http::{client, poll_list_status, send, try_send, TestResponse};
pub use keys::claims_of;
pub use listing::{next_link_target, NextLinks, Page};
pub use matrix::{spawn_named, spawn_process_named};
pub use petstore_test_database as database;
pub use petstore_test_database::{
    eventually, eventually_blocking, unreachable_postgres_url, ClusterControl, StoppedCluster,
    TestDatabase, TestSqliteFile,
};
pub use process::{
    final_error, issue_key, petstore, petstore_binary, run_petstore, start_server,
    start_server_logging_to, without_petstore_settings, StartedServer,
};
pub use startup_line::StartupLine;
pub use walk_through::{run_readme_walk_through, WalkThroughTarget};
