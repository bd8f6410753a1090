//! A connection's I/O as the ledger sees it: [`Tracked`] wraps a connection's [`HeadDeadline`]
//! and tells its [`Slot`](super::ledger::Slot) when a request starts arriving (busy) and when
//! its response has been written (idle), and ends the connection when the ledger says so: the
//! reader sees the end of the stream, and actix-http closes the connection as it would for a
//! client that hung up (a response still being written is finished first).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::head_deadline::HeadDeadline;
use super::ledger::{Refusal, Ticket};

/// Whether a request is on the connection, as this connection last told its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No request yet.
    Fresh,
    Busy,
    /// A response written, no byte of the next request read.
    Idle,
}

/// A connection's I/O, reporting to the ledger.
#[derive(Debug)]
pub struct Tracked<IO> {
    io: HeadDeadline<IO>,
    ticket: Ticket,
    phase: Phase,
    /// Whether the slot knows the connection's task (which is the same for its whole life).
    task_registered: bool,
}

impl<IO> Tracked<IO> {
    pub(crate) fn new(io: HeadDeadline<IO>, ticket: Ticket) -> Self {
        Self {
            io,
            ticket,
            phase: Phase::Fresh,
            task_registered: false,
        }
    }

    /// Why the ledger refused the connection, if it did.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        self.ticket.refusal()
    }

    /// Lets the ledger wake the connection's task when it ends the connection: registered
    /// before a connection can be ended (fresh and waiting, or idle), since its task may not
    /// read again until something wakes it. True if it was ended meanwhile.
    fn wake_task_when_ended(&mut self, task: &std::task::Waker) -> bool {
        if !self.task_registered {
            self.task_registered = true;
            self.ticket.slot().wake_reader_when_ended(task);
        }
        self.ticket.slot().is_ended()
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.ticket.slot().is_ended() {
            return Poll::Ready(Ok(()));
        }
        let filled = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > filled && this.phase != Phase::Busy {
                    this.phase = Phase::Busy;
                    this.ticket.slot().became_busy();
                }
                Poll::Ready(Ok(()))
            }
            // Only a connection without a request in flight is ever ended.
            Poll::Pending
                if this.phase == Phase::Fresh && this.wake_task_when_ended(cx.waker()) =>
            {
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Tracked<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        if this.phase == Phase::Busy
            && matches!(written, Poll::Ready(Ok(written)) if written > 0)
            && this.io.awaits_head()
        {
            this.phase = Phase::Idle;
            // The task may not read again before the next request (its last read was already
            // pending): the end must be able to wake it from here.
            this.wake_task_when_ended(cx.waker());
            this.ticket.slot().became_idle();
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::io::{duplex, AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;
    use crate::server::ledger::{ConnectionLedger, LedgerBounds};

    /// A ledger of one connection.
    fn ledger() -> Arc<ConnectionLedger> {
        Arc::new(ConnectionLedger::new(
            LedgerBounds {
                max_connections: 1,
                per_client: 1,
                refusal_room: 1,
                trusted: Default::default(),
            },
            "test",
        ))
    }

    #[tokio::test]
    async fn an_idle_connection_ended_by_the_ledger_reads_the_end_at_once() {
        let ledger = ledger();
        let (mut client, server) = duplex(4096);
        let mut server = Tracked::new(
            HeadDeadline::new(server, Duration::from_secs(5)),
            ledger.admit(None),
        );
        // As actix-http does: the read after the request finds nothing before the response is
        // written, and the task reads again only when woken.
        let serving = tokio::spawn(async move {
            let mut buf = [0; 256];
            let mut wrote = false;
            poll_fn(|cx| loop {
                let mut read = ReadBuf::new(&mut buf);
                match Pin::new(&mut server).poll_read(cx, &mut read) {
                    Poll::Ready(Ok(())) if read.filled().is_empty() => return Poll::Ready(()),
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(err)) => panic!("{err}"),
                    Poll::Pending if wrote => return Poll::Pending,
                    Poll::Pending => {
                        let response = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                        let written = Pin::new(&mut server).poll_write(cx, response);
                        assert!(matches!(written, Poll::Ready(Ok(n)) if n == response.len()));
                        wrote = true;
                        return Poll::Pending;
                    }
                }
            })
            .await;
        });
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut response = [0; 38];
        client.read_exact(&mut response).await.unwrap();

        let newcomer = ledger.admit(None);
        assert_eq!(newcomer.refusal(), None, "the idle connection made room");
        tokio::time::timeout(Duration::from_secs(1), serving)
            .await
            .expect("the ended connection's task was not woken")
            .unwrap();
    }

    #[tokio::test]
    async fn a_connection_with_a_request_in_flight_is_never_ended() {
        let ledger = ledger();
        let (mut client, server) = duplex(4096);
        let mut server = Tracked::new(
            HeadDeadline::new(server, Duration::from_secs(5)),
            ledger.admit(None),
        );
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let mut buf = [0; 256];
        assert!(server.read(&mut buf).await.unwrap() > 0);
        assert_eq!(ledger.admit(None).refusal(), Some(Refusal::Full));
        client.write_all(b"more").await.unwrap();
        assert_eq!(server.read(&mut buf).await.unwrap(), 4);
    }
}
