//! A live pet inside a write transaction: read locked, the order holding it, and its change or
//! removal written back. Shared by the pets' own changes and the order transactions, which
//! move pets too, so both take the same lock and skip removed pets alike.

use diesel::prelude::*;
use petstore_domain::{fold_case, CategoryId, OrderStatus, Pet, PetStatus, Tags};

use super::pet_row::{DetailColumns, PetRow};
use super::tags;
use crate::sql::engine::connection::AnyConnection;
use crate::sql::schema::{orders, pets};

/// The live pet `id`, locked until the transaction ends: `FOR UPDATE` on PostgreSQL; on SQLite
/// the transaction already holds the database's write lock (`BEGIN IMMEDIATE`).
pub(crate) fn live_pet_for_update(
    conn: &mut AnyConnection,
    id: i64,
) -> QueryResult<Option<PetRow>> {
    let query = pets::table
        .find(id)
        .filter(pets::removed_at.is_null())
        .select(PetRow::COLUMNS);
    match conn {
        AnyConnection::Postgresql(pg) => query.for_update().first::<PetRow>(pg).optional(),
        AnyConnection::Sqlite(sqlite) => query.first::<PetRow>(sqlite).optional(),
    }
}

/// The order holding pet `id` (placed or approved), if any; the pet's lock keeps it so.
pub(crate) fn holding_order(conn: &mut AnyConnection, pet_id: i64) -> QueryResult<Option<i64>> {
    let holding = [OrderStatus::Placed, OrderStatus::Approved].map(OrderStatus::as_str);
    orders::table
        .filter(orders::pet_id.eq(pet_id))
        .filter(orders::status.eq_any(holding))
        .select(orders::id)
        .first::<i64>(conn)
        .optional()
}

/// What a pet's tag rows hold of it: its tags, each with its category and status.
#[derive(Debug)]
pub(crate) struct TagRowsOf {
    category_id: CategoryId,
    status: PetStatus,
    tags: Tags,
}

impl TagRowsOf {
    pub(crate) fn pet(pet: &Pet) -> Self {
        Self {
            category_id: pet.category_id(),
            status: pet.status(),
            tags: pet.details().tags.clone(),
        }
    }
}

/// Writes `pet`'s fields, details and version over its row, `before` being what its tag rows
/// held. The tag rows are rewritten only when its tags, category or status changed, and the
/// category and status are written only when changed, so that a rename or a new price neither
/// touches the tag rows nor runs the trigger that copies those two columns to them.
pub(crate) fn save(conn: &mut AnyConnection, before: &TagRowsOf, pet: &Pet) -> QueryResult<()> {
    let details = DetailColumns::of(pet.details());
    let row = diesel::update(pets::table.find(pet.id().get()));
    let fields = (
        pets::name.eq(pet.name().as_str()),
        pets::name_folded.eq(fold_case(pet.name().as_str())),
        pets::version.eq(pet.version().get()),
        pets::price_minor.eq(details.price_minor),
        pets::price_currency.eq(details.price_currency),
        pets::description.eq(details.description),
        pets::photo_urls.eq(&details.photo_urls),
        pets::tags.eq(&details.tags),
    );
    let filters_changed = before.category_id != pet.category_id() || before.status != pet.status();
    if filters_changed {
        let filters = (
            pets::category_id.eq(pet.category_id().get()),
            pets::status.eq(pet.status().as_str()),
        );
        row.set((fields, filters)).execute(conn)?;
    } else {
        row.set(fields).execute(conn)?;
    }
    if filters_changed || before.tags != pet.details().tags {
        tags::replace(conn, pet)?;
    }
    Ok(())
}

/// Writes `pet`'s status and version over its row: what an order changes of it.
pub(crate) fn save_status(conn: &mut AnyConnection, pet: &Pet) -> QueryResult<()> {
    diesel::update(pets::table.find(pet.id().get()))
        .set((
            pets::status.eq(pet.status().as_str()),
            pets::version.eq(pet.version().get()),
        ))
        .execute(conn)
        .map(drop)
}

/// Marks `pet` removed at `at` (seconds since the epoch), keeping its last state.
pub(crate) fn remove(conn: &mut AnyConnection, pet: &Pet, at: i64) -> QueryResult<()> {
    diesel::update(pets::table.find(pet.id().get()))
        .set((
            pets::version.eq(pet.version().get()),
            pets::removed_at.eq(Some(at)),
        ))
        .execute(conn)
        .map(drop)
}
