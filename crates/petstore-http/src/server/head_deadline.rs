//! A deadline for every request head on a connection, first or later: [`HeadDeadline`] wraps a
//! connection's I/O under actix-http's HTTP/1 dispatcher.
//!
//! The dispatcher times only the first head of a connection (`client_request_timeout`) and the
//! idle wait between requests (keep-alive); one byte of a later head stops the keep-alive timer
//! and starts nothing, so a client that trickles its next head holds the connection for ever.
//! The wrapper watches the bytes themselves: once a response has been written, the next bytes
//! read start a head, and a head must reach its end (a blank line) within the timeout or the
//! connection is ended. A head that arrives in one read, which is what well-behaved clients
//! send, arms no timer; the timer is allocated on a connection's first slow head only and reused.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::observability::metrics::HEAD_TIMEOUTS;

/// The interim response actix-http writes before reading an `Expect: 100-continue` body: what
/// follows it on the wire is that request's body, not a new head.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A connection whose request heads each get `timeout` from their first byte to their end.
#[derive(Debug)]
pub struct HeadDeadline<IO> {
    io: IO,
    timeout: Duration,
    head: Head,
    head_end: HeadEnd,
    timer: Option<Pin<Box<Sleep>>>,
    /// Bytes of an interim `100 Continue` still to be written.
    interim_left: usize,
}

/// Where the next request head is, as far as the bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// A response was written (or nothing yet): the next bytes read start a head.
    Awaited,
    /// Part of a head has arrived and the deadline runs.
    Arriving,
    /// The head ended: what is read now is its body (or pipelined requests); no deadline here,
    /// the body has its own (`PETSTORE_BODY_TIMEOUT`).
    Received,
}

impl<IO> HeadDeadline<IO> {
    pub fn new(io: IO, timeout: Duration) -> Self {
        Self {
            io,
            timeout,
            head: Head::Awaited,
            head_end: HeadEnd::default(),
            timer: None,
            interim_left: 0,
        }
    }

    /// Whether a response has been written and the next request's head has not begun: the
    /// connection is idle, as far as the bytes tell.
    pub fn awaits_head(&self) -> bool {
        self.head == Head::Awaited
    }

    fn start_deadline(&mut self) {
        let deadline = Instant::now() + self.timeout;
        match &mut self.timer {
            Some(timer) => timer.as_mut().reset(deadline),
            None => self.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
    }

    /// Follows the bytes just read through the head they belong to.
    fn note_read(&mut self, bytes: &[u8]) {
        match self.head {
            Head::Received => {}
            Head::Awaited | Head::Arriving => {
                if self.head_end.found_in(bytes) {
                    self.head = Head::Received;
                } else if self.head == Head::Awaited {
                    self.head = Head::Arriving;
                    self.start_deadline();
                }
            }
        }
    }

    /// A response written (other than an interim `100 Continue`) means the next bytes read are
    /// a new head.
    fn note_written(&mut self, bytes: &[u8]) {
        let mut rest = bytes.len();
        if self.interim_left > 0 {
            let interim = rest.min(self.interim_left);
            self.interim_left -= interim;
            rest -= interim;
        } else if self.head == Head::Received && bytes.starts_with(CONTINUE) {
            let interim = rest.min(CONTINUE.len());
            self.interim_left = CONTINUE.len() - interim;
            rest -= interim;
        }
        if rest > 0 {
            self.head = Head::Awaited;
            self.head_end = HeadEnd::default();
        }
    }

    fn deadline_passed(&mut self, cx: &mut Context<'_>) -> bool {
        self.head == Head::Arriving
            && self
                .timer
                .as_mut()
                .is_some_and(|timer| timer.as_mut().poll(cx).is_ready())
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for HeadDeadline<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.deadline_passed(cx) {
            metrics::counter!(HEAD_TIMEOUTS).increment(1);
            tracing::debug!(timeout = ?this.timeout, "request head too slow; closing the connection");
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "request head not received in time",
            )));
        }
        let filled = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        let read = &buf.filled()[filled..];
        if !read.is_empty() {
            this.note_read(read);
            if this.head == Head::Arriving {
                // Registers this task with the timer, which may have just been started.
                if this.deadline_passed(cx) {
                    cx.waker().wake_by_ref();
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for HeadDeadline<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        this.note_written(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Finds the end of a request head, a blank line (`\r\n\r\n`, or `\n\n` as lenient parsers
/// accept), across reads. Blank lines before any other byte do not count: they are the empty
/// lines a server ignores before a request line, and counting them would let a client end its
/// "head" with them and then trickle the real one with no deadline.
#[derive(Debug, Default, Clone, Copy)]
struct HeadEnd {
    seen_content: bool,
    /// How far into a blank line the last byte was.
    state: LineState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum LineState {
    /// Inside a line.
    #[default]
    InLine,
    /// Just after a `\n`: a line starts.
    LineStart,
    /// A `\r` at the start of a line.
    LineStartCr,
}

impl HeadEnd {
    /// Whether `bytes` complete the head. Byte by byte until the first byte of content, then
    /// only what follows each line feed is looked at: a head's few line feeds are found at the
    /// pace of `memchr`, where following every byte of a head (a key alone is 300) cost more
    /// than the rest of reading it.
    fn found_in(&mut self, bytes: &[u8]) -> bool {
        let mut at = 0;
        while !self.seen_content || self.state != LineState::InLine {
            let Some(&byte) = bytes.get(at) else {
                return false;
            };
            if self.step(byte) {
                return true;
            }
            at += 1;
        }
        for line_feed in memchr::memchr_iter(b'\n', &bytes[at..]) {
            let line_start = at + line_feed + 1;
            let returns = bytes[line_start..]
                .iter()
                .take_while(|&&byte| byte == b'\r')
                .count();
            match bytes.get(line_start + returns) {
                Some(b'\n') => return true,
                Some(_) => {}
                None => {
                    self.state = if returns == 0 {
                        LineState::LineStart
                    } else {
                        LineState::LineStartCr
                    };
                    return false;
                }
            }
        }
        false
    }

    /// Follows one byte; whether it completes the head.
    fn step(&mut self, byte: u8) -> bool {
        self.state = match (byte, self.state) {
            (b'\n', LineState::LineStart | LineState::LineStartCr) if self.seen_content => {
                return true;
            }
            (b'\n', _) => LineState::LineStart,
            (b'\r', LineState::LineStart) => LineState::LineStartCr,
            (b'\r', state) => state,
            _ => {
                self.seen_content = true;
                LineState::InLine
            }
        };
        false
    }
}

#[cfg(test)]
mod tests;
