//! `InMemoryOrderRepository`: orders of a `memory:` store, beside its pets. A transaction holds
//! the store's lock from start to end and stages its writes, which are applied only when the
//! work succeeds: other requests see all of it or none of it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use petstore_application::{
    OrderError, OrderRepository, OrderWork, RecordPlan, Recorded, RepositoryError, StoreTransaction,
};
use petstore_domain::{KeyId, NewOrder, Order, OrderFilter, OrderId, Pet, PetId, VisibleOrders};

use super::{InMemoryPetRepository, State};

/// Orders kept with the pets of one in-memory store.
#[derive(Debug)]
pub struct InMemoryOrderRepository {
    state: Arc<Mutex<State>>,
}

impl InMemoryOrderRepository {
    /// The orders of `pets`' store.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
        }
    }
}

/// A transaction's view: the store as it was, plus what the transaction wrote so far.
struct StagedTransaction<'a> {
    state: &'a State,
    pets: BTreeMap<i64, Pet>,
    orders: BTreeMap<i64, Order>,
    last_order_id: i64,
}

impl StoreTransaction for StagedTransaction<'_> {
    fn pet_for_update(&mut self, id: PetId) -> Result<Option<Pet>, RepositoryError> {
        Ok(self
            .pets
            .get(&id.get())
            .or_else(|| self.state.pets.get(&id.get()))
            .cloned())
    }

    fn order_for_update(&mut self, id: OrderId) -> Result<Option<Order>, RepositoryError> {
        Ok(self
            .orders
            .get(&id.get())
            .or_else(|| self.state.orders.get(&id.get()))
            .cloned())
    }

    fn save_pet_status(&mut self, pet: &Pet) -> Result<(), RepositoryError> {
        // The pet was read in this transaction, so all but its status is as stored.
        self.pet_for_update(pet.id())?
            .ok_or_else(|| RepositoryError::Unexpected(format!("no pet {}", pet.id()).into()))?;
        self.pets.insert(pet.id().get(), pet.clone());
        Ok(())
    }

    fn open_orders_for_update(&mut self, placed_by: &KeyId) -> Result<u64, RepositoryError> {
        // The store's lock is held for the whole transaction: nothing else counts meanwhile.
        let stored = self
            .state
            .orders
            .iter()
            .filter(|(id, _)| !self.orders.contains_key(id))
            .map(|(_, order)| order);
        let open = stored
            .chain(self.orders.values())
            .filter(|order| order.is_open() && order.placed_by() == Some(placed_by))
            .count();
        Ok(u64::try_from(open).unwrap_or(u64::MAX))
    }

    fn insert_order(
        &mut self,
        order: NewOrder,
        placed_by: &KeyId,
    ) -> Result<Order, RepositoryError> {
        let id = self.last_order_id.checked_add(1).ok_or_else(|| {
            RepositoryError::Unexpected("the in-memory store ran out of order ids".into())
        })?;
        self.last_order_id = id;
        let order = order.into_order(OrderId::new(id), placed_by.clone());
        self.orders.insert(id, order.clone());
        Ok(order)
    }

    fn save_order(&mut self, order: &Order) -> Result<(), RepositoryError> {
        self.orders.insert(order.id().get(), order.clone());
        Ok(())
    }
}

impl InMemoryOrderRepository {
    /// Runs `work` on a staged copy of what it touches, and applies it to `state` when it
    /// succeeds: all of it or nothing.
    fn apply(state: &mut State, work: &OrderWork) -> Result<Order, OrderError> {
        let mut staged = StagedTransaction {
            state: &*state,
            pets: BTreeMap::new(),
            orders: BTreeMap::new(),
            last_order_id: state.last_order_id,
        };
        let order = work(&mut staged)?;
        let StagedTransaction {
            pets,
            orders,
            last_order_id,
            ..
        } = staged;
        state.pets.extend(pets);
        state.orders.extend(orders);
        state.last_order_id = last_order_id;
        Ok(order)
    }
}

#[async_trait]
impl OrderRepository for InMemoryOrderRepository {
    async fn in_transaction(&self, work: OrderWork) -> Result<Order, OrderError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Self::apply(&mut state, &work)
    }

    async fn in_transaction_recorded(
        &self,
        work: OrderWork,
        plan: RecordPlan<Order>,
    ) -> Result<Recorded<Order>, OrderError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(earlier) = state.live_record(&plan.owner, &plan.key, plan.expired_before) {
            return Ok(Recorded::Earlier(earlier.clone()));
        }
        let order = Self::apply(&mut state, &work)?;
        Ok(state.record(&plan, order))
    }

    async fn find(&self, id: OrderId) -> Result<Option<Order>, RepositoryError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(state.orders.get(&id.get()).cloned())
    }

    async fn list(
        &self,
        visible: VisibleOrders,
        filter: OrderFilter,
        after: Option<OrderId>,
        max: usize,
    ) -> Result<Vec<Order>, RepositoryError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(state
            .orders
            .values()
            .filter(|order| after.is_none_or(|after| order.id() > after))
            .filter(|order| match &visible {
                VisibleOrders::All => true,
                VisibleOrders::PlacedBy(key) => order.placed_by() == Some(key),
            })
            .filter(|order| filter.status.is_none_or(|status| order.status() == status))
            .filter(|order| filter.pet_id.is_none_or(|pet| order.pet_id() == pet))
            .take(max)
            .cloned()
            .collect())
    }
}
