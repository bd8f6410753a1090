use std::net::IpAddr;
use std::sync::Arc;

use super::*;

fn ledger(max_connections: usize, per_client: usize, trusted: &str) -> Arc<ConnectionLedger> {
    Arc::new(ConnectionLedger::new(
        LedgerBounds {
            max_connections,
            per_client,
            refusal_room: 2,
            trusted: trusted.parse().unwrap(),
        },
        "test",
    ))
}

fn peer(text: &str) -> Option<IpAddr> {
    Some(text.parse().unwrap())
}

/// A connection that made a request and waits for its next one.
fn idle(ticket: &Ticket) {
    ticket.slot().became_busy();
    ticket.slot().became_idle();
}

#[test]
fn connections_are_admitted_up_to_the_bound_and_the_next_finding_none_idle_is_refused() {
    let ledger = ledger(3, 10, "");
    let held: Vec<Ticket> = (0..3).map(|_| ledger.admit(peer("10.0.0.1"))).collect();
    assert!(held.iter().all(|ticket| ticket.refusal().is_none()));
    held[0].slot().became_busy();
    // Fresh (no request yet) and busy connections are never ended.
    let refused = ledger.admit(peer("10.0.0.2"));
    assert_eq!(refused.refusal(), Some(Refusal::Full));
    assert!(held.iter().all(|ticket| !ticket.slot().is_ended()));
}

#[test]
fn at_the_bound_the_oldest_idle_connection_makes_room() {
    let ledger = ledger(3, 10, "");
    let held: Vec<Ticket> = (0..3).map(|_| ledger.admit(peer("10.0.0.1"))).collect();
    // The oldest connection has not sent its request yet: it is not idle.
    idle(&held[2]);
    idle(&held[1]);
    let newcomer = ledger.admit(peer("10.0.0.2"));
    assert_eq!(newcomer.refusal(), None);
    assert!(held[1].slot().is_ended());
    assert!(!held[2].slot().is_ended() && !held[0].slot().is_ended());
    let next = ledger.admit(peer("10.0.0.3"));
    assert_eq!(next.refusal(), None);
    assert!(held[2].slot().is_ended());
    // An ended connection's place was given once: dropping it frees nothing more.
    drop(held);
    let book = ledger.book();
    assert_eq!(book.admitted.len(), 2);
    assert_eq!(book.per_peer.get(&"10.0.0.1".parse().unwrap()), None);
}

#[test]
fn a_connection_whose_next_request_began_is_no_longer_idle() {
    let ledger = ledger(1, 10, "");
    let held = ledger.admit(peer("10.0.0.1"));
    idle(&held);
    held.slot().became_busy();
    assert_eq!(
        ledger.admit(peer("10.0.0.2")).refusal(),
        Some(Refusal::Full)
    );
    assert!(!held.slot().is_ended());
}

#[test]
fn one_address_is_refused_past_its_share_while_others_are_admitted() {
    let ledger = ledger(100, 2, "");
    let _first = ledger.admit(peer("10.0.0.1"));
    let _second = ledger.admit(peer("10.0.0.1"));
    assert_eq!(
        ledger.admit(peer("10.0.0.1")).refusal(),
        Some(Refusal::PerClient { bound: 2 })
    );
    // An IPv4 peer seen through an IPv6 socket is the same address.
    assert_eq!(
        ledger.admit(peer("::ffff:10.0.0.1")).refusal(),
        Some(Refusal::PerClient { bound: 2 })
    );
    assert_eq!(ledger.admit(peer("10.0.0.2")).refusal(), None);
    // A closed connection gives its address's place back.
    drop(_first);
    assert_eq!(ledger.admit(peer("10.0.0.1")).refusal(), None);
}

#[test]
fn an_address_over_its_share_is_refused_even_with_an_idle_connection_to_end() {
    let ledger = ledger(2, 1, "");
    let held = ledger.admit(peer("10.0.0.1"));
    idle(&held);
    assert_eq!(
        ledger.admit(peer("10.0.0.1")).refusal(),
        Some(Refusal::PerClient { bound: 1 })
    );
    assert!(!held.slot().is_ended());
}

#[test]
fn trusted_proxies_have_no_share_but_the_bound() {
    let ledger = ledger(4, 1, "10.0.0.0/8");
    let held: Vec<Ticket> = (0..4).map(|_| ledger.admit(peer("10.1.2.3"))).collect();
    assert!(held.iter().all(|ticket| ticket.refusal().is_none()));
    assert_eq!(
        ledger.admit(peer("10.1.2.3")).refusal(),
        Some(Refusal::Full)
    );
    assert!(ledger.book().per_peer.is_empty());
}

#[test]
fn past_the_refusal_room_the_oldest_refused_connection_without_a_request_is_ended() {
    // Room for two refused connections.
    let ledger = ledger(1, 10, "");
    let _held = ledger.admit(peer("10.0.0.1"));
    let first = ledger.admit(peer("10.0.0.2"));
    let second = ledger.admit(peer("10.0.0.3"));
    first.slot().became_busy();
    let third = ledger.admit(peer("10.0.0.4"));
    assert_eq!(third.refusal(), Some(Refusal::Full));
    assert!(!first.slot().is_ended(), "its request is being answered");
    assert!(second.slot().is_ended());
    assert!(!third.slot().is_ended());
    // Every refused connection in the room is being answered: the newcomer is ended at once.
    third.slot().became_busy();
    let fourth = ledger.admit(peer("10.0.0.5"));
    assert!(fourth.slot().is_ended());
    drop((first, third));
    assert!(ledger.book().refused.is_empty());
    let fifth = ledger.admit(peer("10.0.0.6"));
    assert!(!fifth.slot().is_ended());
}

#[test]
fn a_connection_without_a_peer_address_counts_against_the_bound_only() {
    let ledger = ledger(2, 1, "");
    let _one = ledger.admit(None);
    let _two = ledger.admit(None);
    assert_eq!(ledger.admit(None).refusal(), Some(Refusal::Full));
}
