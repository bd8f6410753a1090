use std::time::Duration;

use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::*;

const TIMEOUT: Duration = Duration::from_millis(200);
const HEAD: &[u8] = b"GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n";
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";

fn connection() -> (DuplexStream, HeadDeadline<DuplexStream>) {
    let (client, server) = duplex(4096);
    (client, HeadDeadline::new(server, TIMEOUT))
}

async fn read_some(server: &mut HeadDeadline<DuplexStream>) -> io::Result<Vec<u8>> {
    let mut buf = [0; 256];
    let read = server.read(&mut buf).await?;
    Ok(buf[..read].to_vec())
}

#[tokio::test]
async fn whole_heads_arm_no_timer() {
    let (mut client, mut server) = connection();
    for _ in 0..3 {
        client.write_all(HEAD).await.unwrap();
        assert_eq!(read_some(&mut server).await.unwrap(), HEAD);
        server.write_all(RESPONSE).await.unwrap();
    }
    assert!(server.timer.is_none(), "a timer was allocated");
}

#[tokio::test]
async fn a_later_head_trickled_past_its_deadline_ends_the_connection() {
    let (mut client, mut server) = connection();
    client.write_all(HEAD).await.unwrap();
    read_some(&mut server).await.unwrap();
    server.write_all(RESPONSE).await.unwrap();

    let started = Instant::now();
    let outcome = async {
        for byte in HEAD.iter().take(HEAD.len() - 2) {
            client.write_all(&[*byte]).await?;
            read_some(&mut server).await?;
            tokio::time::sleep(TIMEOUT / 8).await;
        }
        Ok::<_, io::Error>(())
    }
    .await;
    let err = outcome.expect_err("the trickled head was let through");
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    let took = started.elapsed();
    assert!(
        took >= TIMEOUT && took < TIMEOUT * 3,
        "ended after {took:?}"
    );
}

#[tokio::test]
async fn a_quiet_connection_with_half_a_head_is_ended_without_more_bytes() {
    let (mut client, mut server) = connection();
    client.write_all(b"GET / HT").await.unwrap();
    read_some(&mut server).await.unwrap();
    let err = tokio::time::timeout(TIMEOUT * 3, read_some(&mut server))
        .await
        .expect("the deadline did not wake the reader")
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
}

#[tokio::test]
async fn a_head_finished_in_time_stops_its_deadline() {
    let (mut client, mut server) = connection();
    client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    read_some(&mut server).await.unwrap();
    client.write_all(b"Host: x\r\n\r\n").await.unwrap();
    read_some(&mut server).await.unwrap();
    // Body bytes, however slow, are the body deadline's business.
    tokio::time::sleep(TIMEOUT * 2).await;
    client.write_all(b"{}").await.unwrap();
    assert_eq!(read_some(&mut server).await.unwrap(), b"{}");
}

#[tokio::test]
async fn a_body_after_100_continue_is_not_a_head() {
    let (mut client, mut server) = connection();
    client
        .write_all(b"POST /v1/pets HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        .await
        .unwrap();
    read_some(&mut server).await.unwrap();
    server.write_all(CONTINUE).await.unwrap();
    client.write_all(b"{").await.unwrap();
    read_some(&mut server).await.unwrap();
    tokio::time::sleep(TIMEOUT * 2).await;
    client.write_all(b"}").await.unwrap();
    assert_eq!(read_some(&mut server).await.unwrap(), b"}");
}

#[test]
fn the_head_ends_at_the_first_blank_line_after_some_content() {
    let mut end = HeadEnd::default();
    assert!(
        !end.found_in(b"\r\n\r\n\n"),
        "empty lines before a request line"
    );
    assert!(!end.found_in(b"GET / HTTP/1.1\r\nHost: x\r"));
    assert!(!end.found_in(b"\n\r"));
    assert!(end.found_in(b"\n"));
    assert!(HeadEnd::default().found_in(b"GET / HTTP/1.1\nHost: x\n\n"));
    assert!(!HeadEnd::default().found_in(b"GET / HTTP/1.1\r\nHost: x\r\n"));
}

#[test]
fn a_head_ends_where_byte_by_byte_reading_says_however_it_is_split() {
    let heads: [&[u8]; 7] = [
        b"GET /v1/pets/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\r\n\r\n",
        b"\r\n\r\nGET / HTTP/1.1\nHost: x\n\nnext",
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n",
        b"\n\n\r\n\r\r\n",
        b"G\n\rX\n\r\r",
        b"GET / HTTP/1.1\r\n\rHost: x\r\n\r\n",
    ];
    for head in heads {
        let by_bytes = |parts: &[&[u8]]| {
            let mut end = HeadEnd::default();
            parts
                .iter()
                .map(|part| part.iter().any(|&byte| end.step(byte)))
                .collect::<Vec<bool>>()
        };
        for cut in 0..=head.len() {
            for second_cut in cut..=head.len() {
                let parts = [&head[..cut], &head[cut..second_cut], &head[second_cut..]];
                let mut end = HeadEnd::default();
                let found: Vec<bool> = parts.iter().map(|part| end.found_in(part)).collect();
                // Once the head has ended the wrapper stops asking, so only the first end counts.
                let first = |found: &[bool]| found.iter().position(|&ended| ended);
                assert_eq!(
                    first(&found),
                    first(&by_bytes(&parts)),
                    "{head:?} cut at {cut} and {second_cut}"
                );
            }
        }
    }
}
