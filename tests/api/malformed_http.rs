//! Requests that are not HTTP: actix-http refuses them before any route runs, and an anonymous
//! client sending them must not be able to flood the log with error lines.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use petstore_test_support::{eventually_blocking, start_server_logging_to};

/// Sends `request` on a connection of its own and returns what comes back before the close.
fn exchange(address: &str, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream.write_all(request).expect("send");
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received);
    String::from_utf8_lossy(&received).into_owned()
}

#[test]
fn malformed_requests_are_refused_without_error_lines_in_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let started = start_server_logging_to(dir.path(), "memory:", &[], Stdio::from(log));
    let mut child = started.child;
    let address = started.address.trim_start_matches("http://").to_owned();

    for _ in 0..20 {
        let answer = exchange(&address, b"NOT HTTP AT ALL\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        let huge = format!(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
            "a".repeat(256 * 1024)
        );
        let answer = exchange(&address, huge.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
        let answer = exchange(
            &address,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        );
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    }
    // A request that parses is logged as usual, so the log is being written.
    let answer = exchange(
        &address,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Lines are written by a logging thread, in order: once that request's line is in the file,
    // so is everything the malformed requests could have logged before it.
    eventually_blocking(
        Duration::from_secs(10),
        "the /healthz request's line in the log",
        || {
            let log = std::fs::read_to_string(&log_path).expect("read the log");
            if log.contains("/healthz") {
                Ok(())
            } else {
                Err(log)
            }
        },
    );
    child.kill().expect("stop the server");
    child.wait().expect("reap the server");

    let log = std::fs::read_to_string(&log_path).expect("read the log");
    assert!(
        log.contains("/healthz"),
        "the request log is missing:\n{log}"
    );
    let errors: Vec<_> = log
        .lines()
        .filter(|line| line.contains("ERROR") || line.contains("\"level\":\"error\""))
        .collect();
    assert!(errors.is_empty(), "error lines: {errors:#?}");
}
