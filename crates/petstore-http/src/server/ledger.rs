//! The connection ledger: every open connection of one listener, its peer, and whether it is
//! idle between requests. It decides, as each connection is accepted and before any byte of it
//! is read, what becomes of it:
//!
//! - **admitted**, when its peer holds fewer than its share and the listener is under its bound;
//! - **admitted in place of an idle one**, at the bound: the oldest keep-alive connection that is
//!   idle is ended (its reader sees the end of the stream), since a client that is waiting for
//!   an answer matters more than one that may never send another request;
//! - **refused**, over its peer's share or at the bound with no idle connection to end: it is
//!   still taken, and its first request is answered at once with an error (`refusal.rs`), so
//!   that no client is left waiting in the kernel's queue. Refused connections are bounded too
//!   (the refusal room); past it the oldest that has not sent its request yet is ended.
//!
//! Trusted proxies have no share: each carries many clients.
//!
//! The ledger's lock is taken twice per connection (accepted, closed). Between requests a
//! connection only stores its phase in its own [`Slot`]: no clock is read, no lock is taken.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::task::AtomicWaker;
use metrics::{Counter, Gauge};

use crate::observability::metrics::{CONNECTIONS, CONNECTIONS_ENDED, CONNECTIONS_REFUSED};
use crate::security::client_address::TrustedProxies;

/// What the ledger allows one listener.
#[derive(Debug, Clone)]
pub(crate) struct LedgerBounds {
    /// Connections admitted at once.
    pub(crate) max_connections: usize,
    /// Connections admitted at once from one peer address (other than a trusted proxy).
    pub(crate) per_client: usize,
    /// Refused connections open at once, waiting for their request to be answered.
    pub(crate) refusal_room: usize,
    pub(crate) trusted: TrustedProxies,
}

/// Why a connection was refused: what its first request is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its peer already holds `bound` connections.
    PerClient { bound: usize },
    /// The listener holds its bound of connections and none of them is idle.
    Full,
}

/// Where a connection is, as far as the ledger needs to know.
const FRESH: u8 = 0;
const BUSY: u8 = 1;
const IDLE: u8 = 2;
const ENDED: u8 = 3;

/// One connection's phase, shared by its I/O (which moves it between fresh, busy and idle) and
/// the ledger (which may end an idle one, or a refused one that is still fresh).
#[derive(Debug)]
pub(crate) struct Slot {
    phase: AtomicU8,
    /// The reader to wake when the connection is ended.
    reader: AtomicWaker,
}

impl Slot {
    fn new(phase: u8) -> Self {
        Self {
            phase: AtomicU8::new(phase),
            reader: AtomicWaker::new(),
        }
    }

    /// Whether the ledger ended the connection: its reader must see the end of the stream.
    pub(crate) fn is_ended(&self) -> bool {
        self.phase.load(Ordering::Acquire) == ENDED
    }

    /// A request is arriving: the connection is no longer idle. This overrides an end the
    /// ledger decided a moment earlier: the request is served (the ledger no longer counts
    /// the connection, which closes after its keep-alive time like any other).
    pub(crate) fn became_busy(&self) {
        self.phase.store(BUSY, Ordering::Release);
    }

    /// The response has been written; the connection waits for its next request.
    pub(crate) fn became_idle(&self) {
        self.phase.store(IDLE, Ordering::Release);
    }

    /// The task to wake when the connection is ended, so that its next read sees
    /// [`is_ended`](Self::is_ended): the connection's task, registered once (then `is_ended`
    /// is checked again).
    pub(crate) fn wake_reader_when_ended(&self, reader: &std::task::Waker) {
        self.reader.register(reader);
    }

    /// Ends the connection if it is in `phase`.
    fn end_if(&self, phase: u8) -> bool {
        // A load first: scans try thousands of slots, most of them in another phase.
        let ended = self.phase.load(Ordering::Relaxed) == phase
            && self
                .phase
                .compare_exchange(phase, ENDED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        if ended {
            self.reader.wake();
        }
        ended
    }
}

/// An admitted connection.
#[derive(Debug)]
struct Entry {
    slot: Arc<Slot>,
    /// The peer whose share it takes (none for a trusted proxy).
    counted_peer: Option<IpAddr>,
}

/// The open connections.
#[derive(Debug, Default)]
struct Book {
    next_id: u64,
    /// Admitted connections by id, the oldest first.
    admitted: BTreeMap<u64, Entry>,
    /// Refused connections by id, the oldest first.
    refused: BTreeMap<u64, Arc<Slot>>,
    per_peer: HashMap<IpAddr, usize>,
}

/// The series a ledger records, labelled with its listener.
#[derive(Debug)]
struct LedgerMetrics {
    admitted: Gauge,
    refused: Gauge,
    refused_per_client: Counter,
    refused_full: Counter,
    ended_idle: Counter,
    ended_unanswered: Counter,
}

impl LedgerMetrics {
    fn new(listener: &'static str) -> Self {
        let refused = |reason: &'static str| metrics::counter!(CONNECTIONS_REFUSED, "listener" => listener, "reason" => reason);
        let ended = |state: &'static str| metrics::counter!(CONNECTIONS_ENDED, "listener" => listener, "state" => state);
        Self {
            admitted: metrics::gauge!(CONNECTIONS, "listener" => listener, "state" => "admitted"),
            refused: metrics::gauge!(CONNECTIONS, "listener" => listener, "state" => "refused"),
            refused_per_client: refused("per_client"),
            refused_full: refused("bound"),
            ended_idle: ended("idle"),
            ended_unanswered: ended("refused"),
        }
    }
}

/// The open connections of one listener, shared by its workers.
#[derive(Debug)]
pub(crate) struct ConnectionLedger {
    bounds: LedgerBounds,
    book: Mutex<Book>,
    metrics: LedgerMetrics,
}

/// A connection's place in the ledger, given up when it is dropped.
#[derive(Debug)]
pub(crate) struct Ticket {
    ledger: Arc<ConnectionLedger>,
    id: u64,
    slot: Arc<Slot>,
    refusal: Option<Refusal>,
}

impl Ticket {
    pub(crate) fn slot(&self) -> &Slot {
        &self.slot
    }

    /// Why the connection was refused, if it was.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        self.refusal
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.ledger.release(self.id);
    }
}

impl ConnectionLedger {
    /// A ledger whose series carry `listener` (`api`, `metrics`).
    pub(crate) fn new(bounds: LedgerBounds, listener: &'static str) -> Self {
        Self {
            bounds,
            book: Mutex::new(Book::default()),
            metrics: LedgerMetrics::new(listener),
        }
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        // The book is consistent after every statement that changes it: a panic elsewhere
        // while it was held leaves nothing half-done.
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Decides what becomes of a connection just accepted from `peer` (see the module's
    /// documentation).
    pub(crate) fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Ticket {
        let peer = peer.map(|peer| peer.to_canonical());
        let counted_peer = peer.filter(|peer| !self.bounds.trusted.trusts(*peer));
        let mut book = self.book();
        let id = book.next_id;
        book.next_id += 1;
        let over_share = counted_peer.is_some_and(|peer| {
            book.per_peer.get(&peer).copied().unwrap_or(0) >= self.bounds.per_client
        });
        let refusal = if over_share {
            Some(Refusal::PerClient {
                bound: self.bounds.per_client,
            })
        } else if book.admitted.len() >= self.bounds.max_connections
            && !self.end_oldest_idle(&mut book)
        {
            Some(Refusal::Full)
        } else {
            None
        };
        let ticket = |slot: Arc<Slot>| Ticket {
            ledger: Arc::clone(self),
            id,
            slot,
            refusal,
        };
        let Some(refusal) = refusal else {
            let slot = Arc::new(Slot::new(FRESH));
            if let Some(peer) = counted_peer {
                *book.per_peer.entry(peer).or_default() += 1;
            }
            book.admitted.insert(
                id,
                Entry {
                    slot: Arc::clone(&slot),
                    counted_peer,
                },
            );
            self.metrics.admitted.set(book.admitted.len() as f64);
            return ticket(slot);
        };
        match refusal {
            Refusal::PerClient { .. } => self.metrics.refused_per_client.increment(1),
            Refusal::Full => self.metrics.refused_full.increment(1),
        }
        if book.refused.len() >= self.bounds.refusal_room && !self.end_oldest_unanswered(&mut book)
        {
            // Every refused connection is being answered: this one is closed unanswered.
            self.metrics.ended_unanswered.increment(1);
            return ticket(Arc::new(Slot::new(ENDED)));
        }
        let slot = Arc::new(Slot::new(FRESH));
        book.refused.insert(id, Arc::clone(&slot));
        self.metrics.refused.set(book.refused.len() as f64);
        ticket(slot)
    }

    /// Ends the oldest admitted connection that is idle and takes it out of the book; false if
    /// none is idle.
    fn end_oldest_idle(&self, book: &mut Book) -> bool {
        let oldest = book
            .admitted
            .iter()
            .find(|(_, entry)| entry.slot.end_if(IDLE))
            .map(|(id, _)| *id);
        let Some(id) = oldest else {
            return false;
        };
        remove_admitted(book, id);
        self.metrics.ended_idle.increment(1);
        true
    }

    /// Ends the oldest refused connection that has not sent its request; false if every one
    /// has.
    fn end_oldest_unanswered(&self, book: &mut Book) -> bool {
        let oldest = book
            .refused
            .iter()
            .find(|(_, slot)| slot.end_if(FRESH))
            .map(|(id, _)| *id);
        let Some(id) = oldest else {
            return false;
        };
        book.refused.remove(&id);
        self.metrics.ended_unanswered.increment(1);
        true
    }

    /// Connections, admitted or refused, not answered yet: those that have not sent a request
    /// and those whose request is being served (`drain.rs`).
    pub(crate) fn unanswered(&self) -> usize {
        let book = self.book();
        let slots = book.admitted.values().map(|entry| &entry.slot);
        slots
            .chain(book.refused.values())
            .filter(|slot| matches!(slot.phase.load(Ordering::Acquire), FRESH | BUSY))
            .count()
    }

    /// Gives up connection `id`'s place (nothing if the ledger already took it back).
    fn release(&self, id: u64) {
        let mut book = self.book();
        if remove_admitted(&mut book, id) {
            self.metrics.admitted.set(book.admitted.len() as f64);
        } else if book.refused.remove(&id).is_some() {
            self.metrics.refused.set(book.refused.len() as f64);
        }
    }
}

/// Takes admitted connection `id` out of the book, and out of its peer's share.
fn remove_admitted(book: &mut Book, id: u64) -> bool {
    let Some(entry) = book.admitted.remove(&id) else {
        return false;
    };
    if let Some(peer) = entry.counted_peer {
        if let Some(count) = book.per_peer.get_mut(&peer) {
            *count -= 1;
            if *count == 0 {
                book.per_peer.remove(&peer);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests;
