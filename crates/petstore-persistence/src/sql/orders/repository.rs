//! `DieselOrderRepository`: the order port on `orders` and `pets`, read on the store's pool. A
//! transaction is one write transaction, the pet's change and the order's together. On SQLite it
//! runs on the writer thread, in turn with every other write (`engine/writes.rs`), so two
//! transactions take turns and the second sees what the first wrote; those queued together
//! share one commit, each in a savepoint of its own, and are answered after it.
//! On PostgreSQL it runs on a pooled connection on the blocking pool, and the pet and the order
//! are read `FOR UPDATE`, so two transactions on one pet take turns; and a key's open orders
//! are counted under a lock of the key's own (an advisory lock), so two orders of one key take
//! turns too.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Integer, Text};
use petstore_application::{
    OrderError, OrderRepository, OrderWork, RecordPlan, RepositoryError, StoreTransaction, Written,
};
use petstore_domain::{
    Currency, EventType, KeyId, NewOrder, Order, OrderFilter, OrderId, OrderQuantity, OrderStatus,
    Pet, PetId, Price, VisibleOrders,
};

use super::order_ids::OrderIds;
use crate::sql::engine::connection::{AnyConnection, Generations};
use crate::sql::engine::errors::{self, ScrubbedMessage};
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::outbox::{self, order_audience, payload, NewEvent};
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::write_transaction::{lock_on_postgres, no_turn};
use crate::sql::engine::writes::Writes;
use crate::sql::engine::Pool;
use crate::sql::idempotency::recorded_write::{write_recorded, Stop};
use crate::sql::pets::locked;
use crate::sql::pets::pet_row::PetRow;
use crate::sql::schema::orders;
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
    orders::price_minor,
    orders::price_currency,
) = (
    orders::id,
    orders::pet_id,
    orders::quantity,
    orders::status,
    orders::ship_date,
    orders::placed_by,
    orders::price_minor,
    orders::price_currency,
);

// Serde: an event's payload is the order's row as JSON (`engine/outbox.rs`).
#[derive(Debug, Queryable, serde::Serialize, serde::Deserialize)]
pub(crate) struct OrderRow {
    id: i64,
    pet_id: i64,
    quantity: i32,
    status: String,
    ship_date: Option<i64>,
    placed_by: Option<String>,
    price_minor: Option<i64>,
    price_currency: Option<String>,
}

impl OrderRow {
    fn of(order: &Order) -> Self {
        Self {
            id: order.id().get(),
            pet_id: order.pet_id().get(),
            quantity: i32::from(order.quantity().get()),
            status: order.status().as_str().to_owned(),
            ship_date: order.ship_date(),
            placed_by: order.placed_by().map(|key| key.as_str().to_owned()),
            price_minor: order.price().map(|price| price.minor_units()),
            price_currency: order
                .price()
                .map(|price| price.currency().code().to_owned()),
        }
    }

    /// The event of `order` reaching its status, its payload the order's row, read by the
    /// staff and the key that placed it.
    fn event(order: &Order) -> QueryResult<NewEvent> {
        Ok(NewEvent {
            event_type: EventType::of_order(order.status()),
            order_audience: Some(order_audience(order.placed_by())),
            data: payload(&Self::of(order))?,
        })
    }

    pub(crate) fn into_order(self) -> Result<Order, RepositoryError> {
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
        let price = match (self.price_minor, self.price_currency) {
            (Some(minor), Some(code)) => Some(
                Currency::parse(&code)
                    .ok()
                    .and_then(|currency| Price::from_minor_units(minor, currency).ok())
                    .ok_or_else(|| corrupt("price"))?,
            ),
            _ => None,
        };
        Ok(Order::restore(
            OrderId::new(self.id),
            PetId::new(self.pet_id),
            quantity,
            status,
            self.ship_date,
            placed_by,
        )
        .with_price(price))
    }
}

/// The transaction a use case's work runs in.
struct DieselTransaction<'a> {
    conn: &'a mut AnyConnection,
    ids: &'a OrderIds,
}

impl DieselTransaction<'_> {
    /// Writes the event of `order` reaching its status into the transaction.
    fn record(&mut self, order: &Order) -> Result<(), RepositoryError> {
        let event = OrderRow::event(order).map_err(query_error)?;
        outbox::append(self.conn, vec![event]).map_err(query_error)
    }
}

fn query_error(error: DieselError) -> RepositoryError {
    errors::from_query(error)
}

impl StoreTransaction for DieselTransaction<'_> {
    fn pet_for_update(&mut self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        let row = locked::live_pet_for_update(self.conn, id.get()).map_err(query_error)?;
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

    fn save_pet(&mut self, pet: &Pet) -> Result<(), RepositoryError> {
        locked::save_status(self.conn, pet).map_err(query_error)?;
        let event = PetRow::event(EventType::PetUpdated, pet).map_err(query_error)?;
        outbox::append(self.conn, vec![event]).map_err(query_error)
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
                    orders::price_minor.eq(placed.price().map(|price| price.minor_units())),
                    orders::price_currency.eq(placed.price().map(|price| price.currency().code())),
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
                let placed = row.into_order()?;
                self.record(&placed)?;
                return Ok(placed);
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
            .map_err(query_error)?;
        self.record(order)
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
    write_recorded(conn, no_turn, plan, health, |conn| {
        work(&mut DieselTransaction { conn, ids }).map_err(|error| match error {
            // A statement of the transaction failed: nothing more is asked of it.
            OrderError::Repository(_) => Stop::Failed(error),
            refusal => Stop::Refused(refusal),
        })
    })
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
            .run_shared(move |conn| transact_on(conn, &work, plan.as_ref(), &ids, &health))
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
