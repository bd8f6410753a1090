//! Storing a batch of new pets in one write transaction: one statement, one commit (one fsync),
//! ids visible in order. A row the database refuses is set apart so the rest of the batch is
//! stored all the same. Creates with an idempotency key store their record in the same
//! transaction; a key already recorded (or twice in the batch) stores nothing more.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::BigInt;
use petstore_application::{RecordPlan, RepositoryError, StoredResponse, Written};
use petstore_domain::{EventType, NewPet, Pet};

use super::new_pet_values::PetValues;
use super::pet_row::{DetailColumns, PetRow};
use super::postgres_insert::PetColumns;
use super::tags;
use crate::event_stamp::{count_written, now_ms};
use crate::sql::engine::connection::AnyConnection;
use crate::sql::engine::errors::{self, ScrubbedMessage};
use crate::sql::engine::group_commit::Group;
use crate::sql::engine::multi_row::{in_parts, MultiRow};
use crate::sql::engine::outbox;
use crate::sql::engine::write_transaction::{in_write_transaction, lock_on_postgres, WriteFailure};
use crate::sql::idempotency::records::{self as records, RecordRow};
use crate::sql::schema::pets;

/// Key of the PostgreSQL advisory lock inserts take turns on: "pets_ids" in ASCII, distinct from
/// the migration lock's key.
const INSERT_LOCK_KEY: i64 = 0x7065_7473_5f69_6473;

/// What each create of a batch became, in the batch's order.
pub(crate) type Outcomes = Vec<Result<Written<Pet>, RepositoryError>>;

/// A create on the writer's queue, with the record to store with it when it came with an
/// idempotency key.
#[derive(Debug)]
pub(crate) struct PetCreate {
    pub(crate) new_pet: NewPet,
    pub(crate) plan: Option<RecordPlan<Pet>>,
}

impl Group for PetCreate {
    type Stored = Written<Pet>;

    const PANICKED: &'static str = "storing a group of pets panicked";

    fn store(conn: &mut AnyConnection, group: &[&Self]) -> Result<Outcomes, WriteFailure> {
        let batch: Vec<Entry<'_>> = group
            .iter()
            .map(|create| Entry {
                new_pet: &create.new_pet,
                plan: create.plan.as_ref(),
            })
            .collect();
        insert_batch(conn, &batch)
    }
}

/// One create of a batch, with the record to store with it when it came with an idempotency
/// key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub(crate) new_pet: &'a NewPet,
    pub(crate) plan: Option<&'a RecordPlan<Pet>>,
}

/// What the transaction did with one entry.
#[derive(Debug)]
enum EntryOutcome {
    /// Stored; with the response stored in its record, if it had a plan.
    Done(Pet, Option<StoredResponse>),
    /// Not stored: a record for its key was there first.
    Earlier(RecordRow),
    /// Not stored: an earlier entry of the batch has its key; it gets that entry's answer.
    SameKeyAs(usize),
}

/// Stores `batch` in one transaction. `Err` means the whole batch failed and nothing of it is
/// stored; `Ok` holds each create's own outcome, where a pet the database refused (a
/// constraint, a trigger) fails alone and every other one is stored.
pub(crate) fn insert_batch(
    conn: &mut AnyConnection,
    batch: &[Entry<'_>],
) -> Result<Outcomes, WriteFailure> {
    match in_write_transaction(conn, take_turn_to_insert, |conn| store(conn, batch)) {
        Ok(slots) => Ok(outcomes(batch, slots)),
        // A full disk or a read-only file fails every row alike: the whole batch fails.
        Err(WriteFailure::Statement(error))
            if !errors::is_unavailable(&error) && errors::fault_of(&error).is_none() =>
        {
            if batch.len() == 1 {
                return Ok(vec![Err(errors::from_query(error))]);
            }
            // Some row was refused, but which one the database does not say: store them one
            // by one, each behind a savepoint, so only the refused ones fail.
            in_write_transaction(conn, take_turn_to_insert, |conn| {
                Ok(batch
                    .iter()
                    .map(|entry| {
                        let one = std::slice::from_ref(entry);
                        conn.transaction(|conn| store(conn, one))
                            .map_err(errors::from_query)
                            .and_then(|slots| {
                                outcomes(one, slots).pop().unwrap_or_else(|| {
                                    Err(unexpected("a stored pet has no outcome"))
                                })
                            })
                    })
                    .collect())
            })
        }
        Err(failure) => Err(failure),
    }
}

fn unexpected(what: &str) -> RepositoryError {
    RepositoryError::Unexpected(Box::new(ScrubbedMessage(what.to_owned())))
}

/// Inside the transaction: sets apart the creates whose key came earlier in this batch,
/// inserts the other pets in one statement, and their records in one more. A key whose record
/// is stored already and live (a retry, or another instance's write) stores no record: its pet
/// is deleted again before the commit and it is answered from that record.
fn store(conn: &mut AnyConnection, batch: &[Entry<'_>]) -> QueryResult<Vec<EntryOutcome>> {
    let mut slots: Vec<Option<EntryOutcome>> = batch.iter().map(|_| None).collect();
    let mut first_of_key: Vec<(usize, &RecordPlan<Pet>)> = Vec::new();
    for (at, entry) in batch.iter().enumerate() {
        let Some(plan) = entry.plan else { continue };
        match first_of_key
            .iter()
            .find(|(_, first)| first.owner == plan.owner && first.key == plan.key)
        {
            Some(&(first, _)) => slots[at] = Some(EntryOutcome::SameKeyAs(first)),
            None => first_of_key.push((at, plan)),
        }
    }
    let to_insert: Vec<usize> = (0..batch.len()).filter(|&at| slots[at].is_none()).collect();
    if to_insert.is_empty() {
        return collect(slots);
    }
    let new_pets: Vec<&NewPet> = to_insert.iter().map(|&at| batch[at].new_pet).collect();
    let rows = insert_all(conn, &new_pets)?;
    let mut records = Vec::new();
    for (&at, row) in to_insert.iter().zip(assign(&new_pets, rows)) {
        let pet = row
            .ok_or_else(|| deserialization("the database returned no row for an inserted pet"))?
            .into_created(batch[at].new_pet)
            .map_err(|error| DieselError::DeserializationError(Box::new(error)))?;
        if let Some(plan) = batch[at].plan {
            records.push(plan.record_for(&pet));
        }
        slots[at] = Some(EntryOutcome::Done(pet, None));
    }
    let stored_pets = slots.iter().filter_map(|slot| match slot {
        Some(EntryOutcome::Done(pet, _)) => Some(pet),
        _ => None,
    });
    // PostgreSQL stored them with the pets, in the same statement (`insert_all`).
    if let AnyConnection::Sqlite(_) = conn {
        tags::insert(conn, stored_pets)?;
    }
    // The plans of one group were made within moments of each other: the earliest cutoff
    // replaces no record that any of them would still count as live.
    let expired_before = first_of_key
        .iter()
        .map(|(_, plan)| plan.expired_before)
        .min()
        .unwrap_or(i64::MIN);
    let earlier = records::store_with_write(conn, &records, expired_before)?;
    // Each plan's record, in the order `records` was made: batch order.
    for ((at, _), row) in first_of_key.iter().zip(earlier) {
        let Some(row) = row else { continue };
        if let Some(EntryOutcome::Done(pet, _)) = &slots[*at] {
            tags::delete_of(conn, pet.id().get())?;
            diesel::delete(pets::table.find(pet.id().get())).execute(conn)?;
            if let AnyConnection::Postgresql(pg) = conn {
                diesel::sql_query(PG_DELETE_CREATED_EVENT)
                    .bind::<BigInt, _>(pet.id().get())
                    .execute(pg)?;
            }
        }
        slots[*at] = Some(EntryOutcome::Earlier(row));
    }
    let created = slots.iter().filter_map(|slot| match slot {
        Some(EntryOutcome::Done(pet, _)) => Some(pet),
        _ => None,
    });
    match conn {
        // Written by the insert itself (`postgres_insert`).
        AnyConnection::Postgresql(_) => created.for_each(|_| count_written(EventType::PetCreated)),
        AnyConnection::Sqlite(_) => {
            let events = created
                .map(|pet| PetRow::event(EventType::PetCreated, pet))
                .collect::<QueryResult<Vec<_>>>()?;
            outbox::append(conn, events)?;
        }
    }
    // The responses stored go back with their pets, to be sent as they were stored.
    for ((at, _), record) in first_of_key.into_iter().zip(records) {
        if let Some(EntryOutcome::Done(_, response)) = &mut slots[at] {
            *response = Some(record.response);
        }
    }
    collect(slots)
}

fn collect(slots: Vec<Option<EntryOutcome>>) -> QueryResult<Vec<EntryOutcome>> {
    slots
        .into_iter()
        .map(|slot| slot.ok_or_else(|| deserialization("a create of the batch was left out")))
        .collect()
}

fn deserialization(what: &str) -> DieselError {
    DieselError::DeserializationError(Box::new(ScrubbedMessage(what.to_owned())))
}

/// Each entry's outcome from what the transaction did with it.
fn outcomes(batch: &[Entry<'_>], slots: Vec<EntryOutcome>) -> Outcomes {
    // Sized up front: an outcome is large (a record's worth), and growing the list one push at
    // a time would copy it over and over on the writer thread.
    let mut done: Outcomes = Vec::with_capacity(slots.len());
    for slot in slots {
        let outcome = match slot {
            EntryOutcome::Done(pet, response) => Ok(Written::Done(pet, response)),
            EntryOutcome::Earlier(row) => row.into_record().map(Written::Earlier),
            // The first of the key comes earlier in the batch, so its outcome is known.
            EntryOutcome::SameKeyAs(first) => match (&done[first], batch[first].plan) {
                (Ok(Written::Done(pet, _)), Some(plan)) => {
                    Ok(Written::Earlier(plan.record_for(pet)))
                }
                (Ok(Written::Earlier(record)), _) => Ok(Written::Earlier(record.clone())),
                _ => Err(unexpected("the first create of a key failed")),
            },
        };
        done.push(outcome);
    }
    done
}

/// Deletes, in PostgreSQL's open transaction, the `pet.created` event it wrote for the pet `id`
/// (a create answered from an earlier record stores nothing).
const PG_DELETE_CREATED_EVENT: &str = "DELETE FROM events \
    WHERE commit_position = pg_current_xact_id()::text::bigint AND type = 'pet.created' \
    AND (data::json ->> 'id')::bigint = $1";

/// Inserts the batch's pets and returns their rows. On PostgreSQL one statement stores them with
/// their tag rows and events, their values one array per column (`postgres_insert`). On SQLite
/// `INSERT ... VALUES (...), (...) RETURNING ...`, in parts of power-of-two sizes, each kept
/// prepared (`multi_row`); the tag rows and events are written after it.
fn insert_all(conn: &mut AnyConnection, batch: &[&NewPet]) -> QueryResult<Vec<PetRow>> {
    let rows: Vec<PetValues<'_>> = batch.iter().map(|new_pet| PetValues::of(new_pet)).collect();
    match conn {
        AnyConnection::Postgresql(pg) => PetColumns::of(&rows, now_ms()).insert(pg),
        AnyConnection::Sqlite(sqlite) => {
            let mut stored = Vec::with_capacity(rows.len());
            for part in in_parts(&rows) {
                stored.extend(
                    MultiRow {
                        head: "INSERT INTO pets (name, category_id, status, price_minor, \
                               price_currency, description, photo_urls, tags, name_folded)",
                        rows: part,
                        tail: PetRow::RETURNING,
                    }
                    .load::<PetRow>(sqlite)?,
                );
            }
            Ok(stored)
        }
    }
}

/// Pairs each requested pet with a row that stores it. A multi-row `RETURNING` is not promised
/// in `VALUES` order, so rows are matched by content, lowest id first (equal pets are
/// interchangeable; each gets an id of its own).
fn assign(batch: &[&NewPet], rows: Vec<PetRow>) -> Vec<Option<PetRow>> {
    let mut rows: Vec<Option<PetRow>> = {
        let mut sorted = rows;
        sorted.sort_unstable_by_key(|row| row.id);
        sorted.into_iter().map(Some).collect()
    };
    batch
        .iter()
        .map(|new_pet| {
            let details = DetailColumns::of(new_pet.details());
            rows.iter_mut()
                .find(|slot| {
                    slot.as_ref()
                        .is_some_and(|row| row.holds(new_pet, &details))
                })
                .and_then(Option::take)
        })
        .collect()
}

/// Makes ids become visible in the order they are handed out, so paging by "ids after the last
/// one seen" never steps over a pet.
///
/// PostgreSQL takes an identity value when the row is inserted but shows the row only at commit,
/// so of two concurrent inserts the one with the higher id can commit first; a page read between
/// the two commits ends past the lower id, and the next page starts after it. A
/// transaction-scoped advisory lock, taken before the insert and released after the commit is
/// visible, lets one insert transaction at a time run, across every instance on the database.
/// Each instance stores its creates in groups (see `engine/group_commit.rs`), so one turn stores
/// many pets; reads never take the lock. SQLite needs nothing: `BEGIN IMMEDIATE` already admits one
/// writer at a time.
fn take_turn_to_insert(conn: &mut AnyConnection) -> QueryResult<()> {
    lock_on_postgres(conn, |pg| {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(INSERT_LOCK_KEY)
            .execute(pg)
    })
}
