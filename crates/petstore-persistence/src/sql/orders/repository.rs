//! `DieselOrderRepository`: the order port on `orders` and `pets`, read on the store's pool. A
//! transaction is one write transaction, the pet's change and the order's together. On SQLite it
//! runs on the writer thread, in turn with every other write (`engine/writes.rs`), so two
//! transactions take turns and the second sees what the first committed.
//! On PostgreSQL it runs on a pooled connection on the blocking pool, and the pet and the order
//! are read `FOR UPDATE`, so two transactions on one pet take turns; and a key's open orders
//! are counted under a lock of the key's own (an advisory lock), so two orders of one key take
//! turns too.

use std::cell::RefCell;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Integer, Text};
use petstore_application::{
    OrderError, OrderRepository, OrderWork, RecordPlan, RepositoryError, StoreTransaction, Written,
};
use petstore_domain::{
    KeyId, NewOrder, Order, OrderFilter, OrderId, OrderQuantity, OrderStatus, Pet, PetId,
    VisibleOrders,
};

use super::order_ids::OrderIds;
use crate::sql::engine::connection::{AnyConnection, Generations};
use crate::sql::engine::errors::{self, ScrubbedMessage};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::write_transaction::{in_write_transaction, lock_on_postgres, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::sql::idempotency::records::{self as records, RecordRow};
use crate::sql::pets::pet_row::PetRow;
use crate::sql::schema::{orders, pets};
use crate::DatabaseUrl;

/// Orders in the database behind a pool.
#[derive(Clone)]
pub struct DieselOrderRepository {
    pool: Pool,
    writes: Writes,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
    ids: OrderIds,
}

impl std::fmt::Debug for DieselOrderRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselOrderRepository")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// The first key of the PostgreSQL advisory locks a key's orders take turns on ("ords" in
/// ASCII); the second is the hash of the key's id. The two-key locks never meet the one-key
/// locks of migrations and pet inserts.
const KEY_ORDERS_LOCK_CLASS: i32 = 0x6f72_6473;

const COLUMNS: (
    orders::id,
    orders::pet_id,
    orders::quantity,
    orders::status,
    orders::ship_date,
    orders::placed_by,
) = (
    orders::id,
    orders::pet_id,
    orders::quantity,
    orders::status,
    orders::ship_date,
    orders::placed_by,
);

#[derive(Debug, Queryable)]
struct OrderRow {
    id: i64,
    pet_id: i64,
    quantity: i32,
    status: String,
    ship_date: Option<i64>,
    placed_by: Option<String>,
}

impl OrderRow {
    fn into_order(self) -> Result<Order, RepositoryError> {
        let id = self.id;
        let corrupt = |field: &str| {
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "stored order {id} has an invalid {field}"
            ))))
        };
        let status = OrderStatus::parse(&self.status).map_err(|_| corrupt("status"))?;
        let quantity =
            OrderQuantity::parse(i64::from(self.quantity)).map_err(|_| corrupt("quantity"))?;
        let placed_by = self
            .placed_by
            .as_deref()
            .map(KeyId::parse)
            .transpose()
            .map_err(|_| corrupt("owner"))?;
        Ok(Order::restore(
            OrderId::new(self.id),
            PetId::new(self.pet_id),
            quantity,
            status,
            self.ship_date,
            placed_by,
        ))
    }
}

/// The transaction a use case's work runs in.
struct DieselTransaction<'a> {
    conn: &'a mut AnyConnection,
    ids: &'a OrderIds,
}

fn query_error(error: DieselError) -> RepositoryError {
    errors::from_query(error)
}

impl StoreTransaction for DieselTransaction<'_> {
    fn pet_for_update(&mut self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        let query = pets::table.find(id.get()).select(PetRow::COLUMNS);
        let row = match &mut *self.conn {
            AnyConnection::Postgresql(pg) => query.for_update().first::<PetRow>(pg).optional(),
            // The transaction holds the database's write lock (`BEGIN IMMEDIATE`).
            AnyConnection::Sqlite(sqlite) => query.first::<PetRow>(sqlite).optional(),
        }
        .map_err(query_error)?;
        row.map(PetRow::into_pet).transpose()
    }

    fn order_for_update(&mut self, id: OrderId) -> Result<Option<Order>, RepositoryError> {
        let query = orders::table.find(id.get()).select(COLUMNS);
        let row = match &mut *self.conn {
            AnyConnection::Postgresql(pg) => query.for_update().first::<OrderRow>(pg).optional(),
            AnyConnection::Sqlite(sqlite) => query.first::<OrderRow>(sqlite).optional(),
        }
        .map_err(query_error)?;
        row.map(OrderRow::into_order).transpose()
    }

    fn save_pet_status(&mut self, pet: &Pet) -> Result<(), RepositoryError> {
        diesel::update(pets::table.find(pet.id().get()))
            .set(pets::status.eq(pet.status().as_str()))
            .execute(self.conn)
            .map(|_| ())
            .map_err(query_error)
    }

    fn open_orders_for_update(&mut self, placed_by: &KeyId) -> Result<u64, RepositoryError> {
        // Held until the transaction ends: another transaction of this key waits here, and its
        // count (a statement begun after this one commits) sees this one's order.
        lock_on_postgres(self.conn, |pg| {
            diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                .bind::<Integer, _>(KEY_ORDERS_LOCK_CLASS)
                .bind::<Text, _>(placed_by.as_str())
                .execute(pg)
        })
        .map_err(query_error)?;
        let open = orders::table
            .filter(orders::placed_by.eq(placed_by.as_str()))
            .filter(orders::status.eq(OrderStatus::Placed.as_str()))
            .count()
            .get_result::<i64>(self.conn)
            .map_err(query_error)?;
        Ok(u64::try_from(open).unwrap_or(0))
    }

    fn insert_order(
        &mut self,
        order: NewOrder,
        placed_by: &KeyId,
    ) -> Result<Order, RepositoryError> {
        // A taken id inserts nothing (rather than failing, which on PostgreSQL would end the
        // transaction), and another is drawn.
        for _ in 0..OrderIds::DRAWS {
            let placed = order.into_order(OrderId::new(self.ids.draw()?), placed_by.clone());
            let insert = diesel::insert_into(orders::table)
                .values((
                    orders::id.eq(placed.id().get()),
                    orders::pet_id.eq(placed.pet_id().get()),
                    orders::quantity.eq(i32::from(placed.quantity().get())),
                    orders::status.eq(placed.status().as_str()),
                    orders::ship_date.eq(placed.ship_date()),
                    orders::placed_by.eq(placed_by.as_str()),
                ))
                .on_conflict(orders::id)
                .do_nothing()
                .returning(COLUMNS);
            let row = match &mut *self.conn {
                AnyConnection::Postgresql(pg) => insert.get_result::<OrderRow>(pg),
                AnyConnection::Sqlite(sqlite) => insert.get_result::<OrderRow>(sqlite),
            }
            .optional()
            .map_err(query_error)?;
            if let Some(row) = row {
                return row.into_order();
            }
        }
        Err(OrderIds::exhausted())
    }

    fn save_order(&mut self, order: &Order) -> Result<(), RepositoryError> {
        diesel::update(orders::table.find(order.id().get()))
            .set((
                orders::status.eq(order.status().as_str()),
                orders::ship_date.eq(order.ship_date()),
            ))
            .execute(self.conn)
            .map(|_| ())
            .map_err(query_error)
    }
}

impl DieselOrderRepository {
    pub(crate) fn new(
        pool: Pool,
        writes: Writes,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
    ) -> Self {
        Self {
            pool,
            writes,
            generations,
            health,
            url,
            ids: OrderIds::random(),
        }
    }

    /// These orders, drawing new ids from `ids`.
    pub fn with_order_ids(self, ids: OrderIds) -> Self {
        Self { ids, ..self }
    }

    async fn read<T, Q>(&self, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_read()?;
        read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            query,
        )
        .await
    }
}

/// [`OrderRepository::in_transaction`] on `conn`: `work` and, with a `plan`, its record, in one
/// write transaction.
fn transact_on(
    conn: &mut AnyConnection,
    work: &OrderWork,
    plan: Option<&RecordPlan<Order>>,
    ids: &OrderIds,
    health: &StoreHealth,
) -> Result<Written<Order>, OrderError> {
    // The work's own refusal (a conflict, a missing pet) must roll back and reach the caller as
    // it is; diesel only knows its own errors, so it waits here meanwhile. So does a record
    // found stored first for the plan's key.
    let refused: RefCell<Option<OrderError>> = RefCell::new(None);
    let earlier: RefCell<Option<RecordRow>> = RefCell::new(None);
    let outcome = in_write_transaction(conn, no_turn, |conn| {
        let order = match work(&mut DieselTransaction { conn, ids }) {
            Ok(order) => order,
            Err(error) => {
                // A retry of a carried-out request is answered from its record, not refused
                // by what that request changed (its pet is taken by its own order). A failed
                // statement is passed on as it is: its transaction answers nothing more.
                if let (Some(plan), false) = (plan, matches!(error, OrderError::Repository(_))) {
                    let row = records::find(conn, &plan.owner, &plan.key)?;
                    earlier.replace(row.filter(|row| row.is_live(plan.expired_before)));
                }
                refused.replace(Some(error));
                return Err(DieselError::RollbackTransaction);
            }
        };
        let Some(plan) = plan else {
            return Ok(Written::Done(order, None));
        };
        let record = plan.record_for(&order);
        let mut stored =
            records::store_with_write(conn, std::slice::from_ref(&record), plan.expired_before)?;
        if let Some(row) = stored.pop().flatten() {
            earlier.replace(Some(row));
            return Err(DieselError::RollbackTransaction);
        }
        Ok(Written::Done(order, Some(record.response)))
    });
    match (outcome, earlier.into_inner(), refused.into_inner()) {
        (Ok(written), _, _) => Ok(written),
        (Err(_), Some(row), _) => Ok(Written::Earlier(row.into_record()?)),
        (Err(_), None, Some(refusal)) => Err(refusal),
        (Err(failure), None, None) => Err(OrderError::Repository(
            failure.into_repository_error(health),
        )),
    }
}

#[async_trait]
impl OrderRepository for DieselOrderRepository {
    async fn in_transaction(
        &self,
        work: OrderWork,
        plan: Option<RecordPlan<Order>>,
    ) -> Result<Written<Order>, OrderError> {
        self.health.admit_write()?;
        let (ids, health) = (self.ids.clone(), self.health.clone());
        self.writes
            .run(move |conn| transact_on(conn, &work, plan.as_ref(), &ids, &health))
            .await?
    }

    async fn find(&self, id: OrderId) -> Result<Option<Order>, RepositoryError> {
        let row = self
            .read(move |conn| {
                orders::table
                    .find(id.get())
                    .select(COLUMNS)
                    .first::<OrderRow>(conn)
                    .optional()
            })
            .await?;
        row.map(OrderRow::into_order).transpose()
    }

    async fn list(
        &self,
        visible: VisibleOrders,
        filter: OrderFilter,
        after: Option<OrderId>,
        max: usize,
    ) -> Result<Vec<Order>, RepositoryError> {
        let after = after.map_or(i64::MIN, OrderId::get);
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = self
            .read(move |conn| {
                let mut query = orders::table
                    .filter(orders::id.gt(after))
                    .select(COLUMNS)
                    .order(orders::id)
                    .limit(max)
                    .into_boxed();
                if let VisibleOrders::PlacedBy(key) = &visible {
                    query = query.filter(orders::placed_by.eq(key.as_str().to_owned()));
                }
                if let Some(status) = filter.status {
                    query = query.filter(orders::status.eq(status.as_str()));
                }
                if let Some(pet_id) = filter.pet_id {
                    query = query.filter(orders::pet_id.eq(pet_id.get()));
                }
                query.load::<OrderRow>(conn)
            })
            .await?;
        rows.into_iter().map(OrderRow::into_order).collect()
    }
}
