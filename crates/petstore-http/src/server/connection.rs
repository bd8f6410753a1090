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
}

impl<IO> Tracked<IO> {
    pub(crate) fn new(io: HeadDeadline<IO>, ticket: Ticket) -> Self {
        Self {
            io,
            ticket,
            phase: Phase::Fresh,
        }
    }

    /// Why the ledger refused the connection, if it did.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        self.ticket.refusal()
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let slot = this.ticket.slot();
        if slot.is_ended() {
            return Poll::Ready(Ok(()));
        }
        let filled = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > filled && this.phase != Phase::Busy {
                    this.phase = Phase::Busy;
                    slot.became_busy();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.phase != Phase::Busy => {
                // Only a connection without a request in flight is ever ended; registered
                // before the second look, so an end decided in between still wakes this task.
                slot.wake_reader_when_ended(cx.waker());
                if slot.is_ended() {
                    Poll::Ready(Ok(()))
                } else {
                    Poll::Pending
                }
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
            this.ticket.slot().became_idle(this.ticket.now());
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
