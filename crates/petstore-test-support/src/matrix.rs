//! The backend matrix of the end-to-end suites: one scenario, a test per backend.

use crate::app::TestApp;
use crate::backend::backend_named;

/// Declares each scenario `async fn NAME(app: TestApp)` once and runs it against each backend
/// listed, as tests named `BACKEND::NAME`: on an in-process server, or with `process` first, on
/// the binary in a process of its own (for `kill -9` and restarts). For a server set up
/// otherwise, give the matrix of `petstore-test-database` a setup function of the test's own:
/// `petstore_test_support::database::on_backends!(#[actix_web::test] setup, [memory] NAME)`.
#[macro_export]
macro_rules! on_backends {
    (process [$($backend:ident),* $(,)?] $($scenario:ident),+ $(,)?) => {
        $crate::database::on_backends!(
            #[actix_web::test] $crate::spawn_process_named, [$($backend),*] $($scenario),+
        );
    };
    ([$($backend:ident),* $(,)?] $($scenario:ident),+ $(,)?) => {
        $crate::database::on_backends!(
            #[actix_web::test] $crate::spawn_named, [$($backend),*] $($scenario),+
        );
    };
}

/// [`TestApp::spawn`] on the backend called `name`.
pub async fn spawn_named(name: &str) -> TestApp {
    TestApp::spawn(backend_named(name)).await
}

/// [`TestApp::spawn_process`] on the backend called `name`.
pub async fn spawn_process_named(name: &str) -> TestApp {
    TestApp::spawn_process(backend_named(name)).await
}
