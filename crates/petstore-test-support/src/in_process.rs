//! The library's `Application` served from the test's own process.

use std::sync::mpsc;
use std::time::Duration;

use petstore_server::cli::ServeArgs;
use petstore_server::keys::KeyIssuer;
use petstore_server::Application;

/// The library's `Application` on a thread with an actix runtime of its own, so the test's
/// runtime and the server's never wait on each other. Stopped (and its storage closed) on drop.
pub(crate) struct InProcessServer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub(crate) key_issuer: KeyIssuer,
}

impl InProcessServer {
    pub(crate) fn start(args: ServeArgs) -> (Self, String) {
        init_test_log();
        let (ready, started) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let application = match Application::build(&args).await {
                    Ok(application) => application,
                    Err(error) => {
                        let _ = ready.send(Err(error.to_string()));
                        return;
                    }
                };
                let handle = application.handle();
                let _ = ready.send(Ok((application.address(), application.key_issuer())));
                actix_web::rt::spawn(async move {
                    let _ = stopped.await;
                    handle.stop(false).await;
                });
                let _ = application.run_until_stopped().await;
            });
        });
        let (address, key_issuer) = match started.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok((address, key_issuer))) => (format!("http://{address}"), key_issuer),
            Ok(Err(error)) => panic!("the service did not start: {error}"),
            Err(_) => panic!("the service did not start within a minute"),
        };
        let server = Self {
            stop: Some(stop),
            thread: Some(thread),
            key_issuer,
        };
        (server, address)
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// With `TEST_LOG` set, in-process servers log to the test's output.
fn init_test_log() {
    static INIT: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("TEST_LOG").is_some() {
        INIT.call_once(|| {
            let _ = tracing_subscriber::fmt()
                .with_env_filter("info")
                .with_test_writer()
                .try_init();
        });
    }
}
