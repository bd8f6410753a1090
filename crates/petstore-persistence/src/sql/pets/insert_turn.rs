//! The insert turn: groups of new pets insert one at a time, so that ids become visible in the
//! order they are handed out and paging by "ids after the last one seen" never steps over a pet.
//!
//! PostgreSQL takes an identity value when the row is inserted but shows the row only at
//! commit, so of two concurrent inserts the one with the higher id can commit first; a page read
//! between the two commits ends past the lower id, and the next page starts after it. Across
//! every instance on the database:
//! - a group takes the turn (a session-level advisory lock) and a ticket, the next value of a
//!   sequence, which it locks until its transaction ends (`pet_insert_turn`, in
//!   `migrations/postgres`);
//! - it gives the turn back as soon as its pets are inserted, so the next group inserts while
//!   this one writes its events and commits;
//! - before its commit it waits for every transaction holding one of the [`WINDOW`] tickets
//!   before its own to end (`pet_insert_wait`), so no group becomes visible before one that
//!   inserted earlier.
//!
//! A release that holds the insert lock exclusively until its commit (as releases did before
//! tickets) excludes every group of this one, and they it: a rolling upgrade keeps the order.
//! SQLite needs none of this: `BEGIN IMMEDIATE` admits one writer at a time.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer};
use diesel::PgConnection;

/// Key of the advisory lock the release before held exclusively for a whole insert
/// transaction; this one holds it shared: "pets_ids" in ASCII.
const INSERT_LOCK_KEY: i64 = 0x7065_7473_5f69_6473;

/// Key of the session-level advisory lock one group holds while it inserts: "pets_trn".
const TURN_LOCK_KEY: i64 = 0x7065_7473_5f74_726e;

/// First key of the advisory locks on tickets (the ticket is the second): "tckt".
const TICKET_CLASS: i32 = 0x7463_6b74;

/// How many tickets before its own a group waits for. A transaction can be passed by at most
/// the number of groups in flight at once, two per instance (`engine/group_commit.rs`), so
/// this covers 16 instances with room for tickets drawn by transactions that failed.
pub(crate) const WINDOW: i32 = 64;

#[derive(QueryableByName)]
struct Ticket {
    #[diesel(sql_type = BigInt)]
    ticket: i64,
}

/// Takes the turn and a ticket, inside the group's transaction. Whatever happens next, the
/// turn is given back with [`give_back`].
pub(crate) fn take(pg: &mut PgConnection) -> QueryResult<i64> {
    diesel::sql_query("SELECT pet_insert_turn($1, $2, $3) AS ticket")
        .bind::<BigInt, _>(TURN_LOCK_KEY)
        .bind::<BigInt, _>(INSERT_LOCK_KEY)
        .bind::<Integer, _>(TICKET_CLASS)
        .get_result::<Ticket>(pg)
        .map(|row| row.ticket)
}

/// Gives the turn back: the next group may insert. Holding none is harmless (PostgreSQL warns
/// and answers false), so this may be called on every way out.
pub(crate) fn give_back(pg: &mut PgConnection) -> QueryResult<()> {
    diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(TURN_LOCK_KEY)
        .execute(pg)
        .map(drop)
}

/// Waits, just before the commit, until every group that inserted before the one holding
/// `ticket` has committed or rolled back.
pub(crate) fn wait_for_earlier(pg: &mut PgConnection, ticket: i64) -> QueryResult<()> {
    diesel::sql_query("SELECT pet_insert_wait($1, $2, $3)")
        .bind::<BigInt, _>(ticket)
        .bind::<Integer, _>(TICKET_CLASS)
        .bind::<Integer, _>(WINDOW)
        .execute(pg)
        .map(drop)
}
