//! The order use cases: place an order for an available pet, approve, deliver or cancel it,
//! get one, list them. Each change of an order and of its pet happens in one transaction of
//! the [`OrderRepository`] port, so the application changes both atomically without knowing
//! how storage makes a transaction (`docs/architecture.md`).
//!
//! Every use case is asked by a [`Caller`] (a key and its scope), and its rules are kept
//! here: a key sees and cancels only the orders it placed, an order it may not see is "not
//! found" like a missing one, only the staff approve and deliver, and a key has at most
//! [`OpenOrderLimit`] orders open, counted in the placing transaction itself.

use std::sync::Arc;

use petstore_domain::{
    Caller, KeyScope, NewOrder, OpenOrderLimit, Order, OrderAction, OrderId, OrderListQuery,
};

mod errors;
mod ports;

pub use errors::OrderError;
#[cfg(any(test, feature = "mocks"))]
pub use ports::{MockOrderRepository, MockStoreTransaction};
pub use ports::{OrderRepository, OrderWork, StoreTransaction};

use crate::clock::{unix_seconds, Clock};
use crate::idempotency::{RecordPlan, Written};
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
    open_order_limit: OpenOrderLimit,
}

impl std::fmt::Debug for OrderService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderService").finish_non_exhaustive()
    }
}

impl OrderService {
    /// The use cases with the default [`OpenOrderLimit`].
    pub fn new(repository: Arc<dyn OrderRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            repository,
            clock,
            open_order_limit: OpenOrderLimit::DEFAULT,
        }
    }

    /// Bounds each key's open orders by `limit` instead of the default.
    pub fn with_open_order_limit(mut self, limit: OpenOrderLimit) -> Self {
        self.open_order_limit = limit;
        self
    }

    /// Places `new` for `caller`: its pet goes `available -> pending` and the order is stored
    /// as the caller's, together; unless the caller already has as many open orders as a key
    /// may. With an idempotency key's `plan`, its record is stored in the same transaction, or
    /// the record stored first for the key comes back.
    pub async fn place(
        &self,
        caller: &Caller,
        new: NewOrder,
        plan: Option<RecordPlan<Order>>,
    ) -> Result<Written<Order>, OrderError> {
        Self::may_place(caller)?;
        self.repository
            .in_transaction(self.placing(caller, new), plan)
            .await
    }

    fn may_place(caller: &Caller) -> Result<(), OrderError> {
        if caller.may_place() {
            Ok(())
        } else {
            Err(OrderError::Forbidden {
                needed: KeyScope::Write,
            })
        }
    }

    fn placing(&self, caller: &Caller, new: NewOrder) -> OrderWork {
        let (placed_by, limit) = (caller.key().clone(), self.open_order_limit);
        Box::new(move |tx| {
            // Counted first: the count holds the key's turn for the rest of the transaction,
            // so a concurrent order of the same key waits and then counts this one.
            limit.admit_one_more(tx.open_orders_for_update(&placed_by)?)?;
            let mut pet = tx
                .pet_for_update(new.pet_id())?
                .ok_or(OrderError::PetNotFound(new.pet_id()))?;
            let mut new = new;
            new.place(&mut pet)?;
            tx.save_pet(&pet)?;
            Ok(tx.insert_order(new, &placed_by)?)
        })
    }

    /// Applies `action` to the order `id` and to its pet, together, for `caller`: an order the
    /// caller may not see is not found, an action its scope does not allow is forbidden. With
    /// an idempotency key's `plan`, as [`place`](Self::place).
    pub async fn act(
        &self,
        caller: &Caller,
        id: OrderId,
        action: OrderAction,
        plan: Option<RecordPlan<Order>>,
    ) -> Result<Written<Order>, OrderError> {
        Self::may_act(caller, action)?;
        self.repository
            .in_transaction(self.acting(caller, id, action), plan)
            .await
    }

    /// Refuses an action the caller's scope does not allow before anything is read, so the
    /// refusal says nothing about the order.
    fn may_act(caller: &Caller, action: OrderAction) -> Result<(), OrderError> {
        if caller.may(action) {
            Ok(())
        } else {
            Err(OrderError::Forbidden {
                needed: action.scope_needed(),
            })
        }
    }

    fn acting(&self, caller: &Caller, id: OrderId, action: OrderAction) -> OrderWork {
        let caller = caller.clone();
        let now = unix_seconds(self.clock.now());
        Box::new(move |tx| {
            let mut order = tx
                .order_for_update(id)?
                .filter(|order| caller.can_see(order))
                .ok_or(OrderError::NotFound(id))?;
            let Some(mut pet) = tx.pet_for_update(order.pet_id())? else {
                // A removed pet's orders are all delivered or cancelled (removal waits for
                // them), so the order's own life cycle refuses first, as for any final order.
                order.check(action)?;
                return Err(OrderError::PetNotFound(order.pet_id()));
            };
            let pet_status = pet.status();
            order.apply(action, &mut pet, now)?;
            tx.save_order(&order)?;
            if pet.status() != pet_status {
                tx.save_pet(&pet)?;
            }
            Ok(order)
        })
    }

    /// The order `id`, if `caller` may see it; else not found, as if there were none.
    pub async fn get(&self, caller: &Caller, id: OrderId) -> Result<Order, OrderError> {
        self.repository
            .find(id)
            .await?
            .filter(|order| caller.can_see(order))
            .ok_or(OrderError::NotFound(id))
    }

    /// `listOrders`: one page of the orders `query` asks for among those `caller` may see,
    /// ascending by id.
    pub async fn list(
        &self,
        caller: &Caller,
        query: OrderListQuery,
    ) -> Result<OrderPage, OrderError> {
        let limit = usize::from(query.limit.get());
        // One row more than the page tells whether another page exists without a second query.
        let mut orders = self
            .repository
            .list(caller.visible(), query.filter, query.after, limit + 1)
            .await?;
        let next_after = cut_page(&mut orders, limit, |order| order.id());
        Ok(OrderPage { orders, next_after })
    }
}

#[cfg(test)]
mod tests;
