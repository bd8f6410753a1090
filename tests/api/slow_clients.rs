//! Clients that start a request and stop sending: each gets a deadline, not a connection of its
//! own for ever.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use petstore_test_support::{send, Backend, TestApp};

const BODY_TIMEOUT: Duration = Duration::from_secs(2);
const STALLED: usize = 200;

/// Opens a connection and sends an authenticated create whose body stops after one byte of the
/// 100 it announced.
fn stall_a_body(app: &TestApp) -> TcpStream {
    let address = app.address.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect");
    let head = format!(
        "POST /v1/pets HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        app.api_key
    );
    stream.write_all(head.as_bytes()).expect("send the head");
    stream
}

/// Everything the server sends until it closes the connection (or `wait` passes).
fn read_until_closed(stream: &mut TcpStream, wait: Duration) -> String {
    stream.set_read_timeout(Some(wait)).expect("read timeout");
    let mut received = Vec::new();
    match stream.read_to_end(&mut received) {
        Ok(_) => String::from_utf8_lossy(&received).into_owned(),
        Err(err) => panic!(
            "the connection was not closed ({err}); received so far: {}",
            String::from_utf8_lossy(&received)
        ),
    }
}

#[actix_web::test]
async fn stalled_bodies_get_408_and_are_closed_while_others_are_served() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_BODY_TIMEOUT", "2s")
        .spawn()
        .await;
    let started = Instant::now();
    let mut stalled: Vec<_> = (0..STALLED).map(|_| stall_a_body(&app)).collect();

    let asked = Instant::now();
    let response = send(app.get("/v1/pets"), None).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "a normal request waited {:?} behind {STALLED} stalled bodies",
        asked.elapsed()
    );

    for stream in &mut stalled {
        let answer = read_until_closed(stream, BODY_TIMEOUT + Duration::from_secs(10));
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
        assert!(answer.contains("connection: close"), "{answer}");
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= BODY_TIMEOUT,
        "answered after {elapsed:?}, before the deadline"
    );
    assert!(
        elapsed < BODY_TIMEOUT + Duration::from_secs(8),
        "{elapsed:?}"
    );

    // The server is as good as new.
    let response = send(app.get("/v1/pets"), None).await;
    assert_eq!(response.status, 200, "{}", response.body);
}

#[actix_web::test]
async fn a_slow_but_steady_body_within_the_deadline_is_stored() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_BODY_TIMEOUT", "2s")
        .spawn()
        .await;
    let address = app.address.trim_start_matches("http://");
    let body = r#"{"name":"Slowpoke","categoryId":1}"#;
    let mut stream = TcpStream::connect(address).expect("connect");
    let head = format!(
        "POST /v1/pets HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        app.api_key,
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send the head");
    for chunk in body.as_bytes().chunks(12) {
        std::thread::sleep(Duration::from_millis(300));
        stream.write_all(chunk).expect("send a chunk");
    }
    let answer = read_until_closed(&mut stream, Duration::from_secs(10));
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("Slowpoke"), "{answer}");
}

/// actix-web's `HttpServer` answers `Expect: 100-continue` itself, before any check of ours
/// (docs/api.md, *Slow clients*): the refusal follows at once, without the body being sent.
#[actix_web::test]
async fn expect_continue_is_followed_by_the_refusal_before_any_body_is_sent() {
    let app = TestApp::spawn(Backend::Memory).await;
    let address = app.address.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect");
    let head = format!(
        "POST /v1/pets HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: 1000000\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("send the head");
    let answer = read_until_closed(&mut stream, Duration::from_secs(5));
    let refusal = answer
        .strip_prefix("HTTP/1.1 100 Continue\r\n\r\n")
        .unwrap_or_else(|| panic!("no 100 Continue first: {answer}"));
    assert!(refusal.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(refusal.contains("\"code\":\"unauthorized\""), "{answer}");
}
