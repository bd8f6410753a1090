//! The order use cases: place an order for an available pet, approve, deliver or cancel it,
//! get one, list them. Each change of an order and of its pet happens in one transaction of
//! the [`OrderRepository`] port, so the application changes both atomically without knowing
//! how storage makes a transaction (`docs/architecture.md`).

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use petstore_domain::{NewOrder, Order, OrderAction, OrderId, OrderListQuery};

mod errors;
mod ports;

pub use errors::OrderError;
#[cfg(any(test, feature = "mocks"))]
pub use ports::{MockOrderRepository, MockStoreTransaction};
pub use ports::{OrderRepository, OrderWork, StoreTransaction};

use crate::clock::Clock;
use crate::idempotency::{RecordPlan, Recorded};
use crate::paging::cut_page;

/// One page of orders; `next_after` is where the following page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPage {
    pub orders: Vec<Order>,
    pub next_after: Option<OrderId>,
}

/// The order use cases over whichever repository and clock the composition root chose.
#[derive(Clone)]
pub struct OrderService {
    repository: Arc<dyn OrderRepository>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for OrderService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderService").finish_non_exhaustive()
    }
}

impl OrderService {
    pub fn new(repository: Arc<dyn OrderRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { repository, clock }
    }

    /// Places `new`: its pet goes `available -> pending` and the order is stored, together.
    pub async fn place(&self, new: NewOrder) -> Result<Order, OrderError> {
        self.repository.in_transaction(Self::placing(new)).await
    }

    /// [`place`](Self::place) with an idempotency key: its record stored in the same
    /// transaction, or the record stored first for the key.
    pub async fn place_recorded(
        &self,
        new: NewOrder,
        plan: RecordPlan<Order>,
    ) -> Result<Recorded<Order>, OrderError> {
        self.repository
            .in_transaction_recorded(Self::placing(new), plan)
            .await
    }

    fn placing(new: NewOrder) -> OrderWork {
        Box::new(move |tx| {
            let mut pet = tx
                .pet_for_update(new.pet_id())?
                .ok_or(OrderError::PetNotFound(new.pet_id()))?;
            new.place(&mut pet)?;
            tx.save_pet_status(&pet)?;
            Ok(tx.insert_order(new)?)
        })
    }

    /// Applies `action` to the order `id` and to its pet, together.
    pub async fn act(&self, id: OrderId, action: OrderAction) -> Result<Order, OrderError> {
        self.repository
            .in_transaction(self.acting(id, action))
            .await
    }

    /// [`act`](Self::act) with an idempotency key: its record stored in the same transaction,
    /// or the record stored first for the key.
    pub async fn act_recorded(
        &self,
        id: OrderId,
        action: OrderAction,
        plan: RecordPlan<Order>,
    ) -> Result<Recorded<Order>, OrderError> {
        self.repository
            .in_transaction_recorded(self.acting(id, action), plan)
            .await
    }

    fn acting(&self, id: OrderId, action: OrderAction) -> OrderWork {
        let now = self
            .clock
            .now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
            });
        Box::new(move |tx| {
            let mut order = tx.order_for_update(id)?.ok_or(OrderError::NotFound(id))?;
            let mut pet = tx
                .pet_for_update(order.pet_id())?
                .ok_or(OrderError::PetNotFound(order.pet_id()))?;
            let pet_status = pet.status();
            order.apply(action, &mut pet, now)?;
            tx.save_order(&order)?;
            if pet.status() != pet_status {
                tx.save_pet_status(&pet)?;
            }
            Ok(order)
        })
    }

    /// The order `id`.
    pub async fn get(&self, id: OrderId) -> Result<Order, OrderError> {
        self.repository
            .find(id)
            .await?
            .ok_or(OrderError::NotFound(id))
    }

    /// `listOrders`: one page of the orders `query` asks for, ascending by id.
    pub async fn list(&self, query: OrderListQuery) -> Result<OrderPage, OrderError> {
        let limit = usize::from(query.limit.get());
        // One row more than the page tells whether another page exists without a second query.
        let mut orders = self
            .repository
            .list(query.filter, query.after, limit + 1)
            .await?;
        let next_after = cut_page(&mut orders, limit, |order| order.id());
        Ok(OrderPage { orders, next_after })
    }
}

#[cfg(test)]
mod tests;
