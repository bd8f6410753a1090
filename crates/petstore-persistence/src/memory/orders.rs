//! `InMemoryOrderRepository`: orders of a `memory:` store, beside its pets. A transaction holds
//! the store's lock from start to end and stages its writes, which are applied only when the
//! work succeeds: other requests see all of it or none of it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use petstore_application::{
    OrderError, OrderRepository, OrderWork, RecordPlan, RepositoryError, StoreTransaction, Written,
};
use petstore_domain::{
    EventSubject, EventType, KeyId, NewOrder, Order, OrderFilter, OrderId, Pet, PetId,
    VisibleOrders,
};

use super::{InMemoryPetRepository, State};
use crate::OrderIds;

/// Orders kept with the pets of one in-memory store.
#[derive(Debug)]
pub struct InMemoryOrderRepository {
    state: Arc<Mutex<State>>,
    ids: OrderIds,
}

impl InMemoryOrderRepository {
    /// The orders of `pets`' store, with random ids.
    pub fn new(pets: &InMemoryPetRepository) -> Self {
        Self {
            state: pets.shared_state(),
            ids: OrderIds::random(),
        }
    }

    /// These orders, drawing new ids from `ids`.
    pub fn with_order_ids(self, ids: OrderIds) -> Self {
        Self { ids, ..self }
    }
}

/// A transaction's view: the store as it was, plus what the transaction wrote so far.
struct StagedTransaction<'a> {
    state: &'a State,
    pets: BTreeMap<i64, Pet>,
    orders: BTreeMap<i64, Order>,
    /// The events of what it wrote, in order.
    events: Vec<(EventType, EventSubject)>,
    ids: &'a OrderIds,
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

    fn save_pet(&mut self, pet: &Pet) -> Result<(), RepositoryError> {
        // The pet was read in this transaction, so all but its status is as stored.
        self.pet_for_update(pet.id())?
            .ok_or_else(|| RepositoryError::Unexpected(format!("no pet {}", pet.id()).into()))?;
        self.pets.insert(pet.id().get(), pet.clone());
        self.events
            .push((EventType::PetUpdated, EventSubject::Pet(pet.clone())));
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
        for _ in 0..OrderIds::DRAWS {
            let id = self.ids.draw()?;
            if self.orders.contains_key(&id) || self.state.orders.contains_key(&id) {
                continue;
            }
            let order = order.into_order(OrderId::new(id), placed_by.clone());
            self.orders.insert(id, order.clone());
            self.events.push((
                EventType::of_order(order.status()),
                EventSubject::Order(order.clone()),
            ));
            return Ok(order);
        }
        Err(OrderIds::exhausted())
    }

    fn save_order(&mut self, order: &Order) -> Result<(), RepositoryError> {
        self.orders.insert(order.id().get(), order.clone());
        self.events.push((
            EventType::of_order(order.status()),
            EventSubject::Order(order.clone()),
        ));
        Ok(())
    }
}

impl InMemoryOrderRepository {
    /// Runs `work` on a staged copy of what it touches, and applies it to `state` when it
    /// succeeds: all of it or nothing.
    fn apply(state: &mut State, ids: &OrderIds, work: &OrderWork) -> Result<Order, OrderError> {
        let mut staged = StagedTransaction {
            state: &*state,
            pets: BTreeMap::new(),
            orders: BTreeMap::new(),
            events: Vec::new(),
            ids,
        };
        let order = work(&mut staged)?;
        let StagedTransaction {
            pets,
            orders,
            events,
            ..
        } = staged;
        state.pets.extend(pets);
        state.orders.extend(orders);
        for (event_type, subject) in events {
            state.events.record(event_type, subject)?;
        }
        Ok(order)
    }
}

#[async_trait]
impl OrderRepository for InMemoryOrderRepository {
    async fn in_transaction(
        &self,
        work: OrderWork,
        plan: Option<RecordPlan<Order>>,
    ) -> Result<Written<Order>, OrderError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.write_recorded(plan, |state| Self::apply(state, &self.ids, &work))
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

#[cfg(test)]
mod tests {
    use petstore_domain::{OrderQuantity, PetId};

    use super::*;

    fn done(written: Written<Order>) -> Order {
        written.done().expect("carried out")
    }

    /// Work that inserts an order for pet 1.
    fn insert() -> OrderWork {
        let key = KeyId::parse(&"a".repeat(32)).expect("a key id");
        Box::new(move |tx| {
            Ok(tx.insert_order(NewOrder::new(PetId::new(1), OrderQuantity::ONE), &key)?)
        })
    }

    #[tokio::test]
    async fn an_order_drawing_a_taken_id_draws_again() {
        let pets = InMemoryPetRepository::new();
        let orders = InMemoryOrderRepository::new(&pets)
            .with_order_ids(OrderIds::in_turn(&[4242, 4242], 9999));
        let first = orders
            .in_transaction(insert(), None)
            .await
            .map(done)
            .expect("first");
        let second = orders
            .in_transaction(insert(), None)
            .await
            .map(done)
            .expect("second");
        assert_eq!((first.id().get(), second.id().get()), (4242, 9999));
    }

    #[tokio::test]
    async fn an_order_finding_every_id_it_draws_taken_stores_nothing() {
        let pets = InMemoryPetRepository::new();
        let orders = InMemoryOrderRepository::new(&pets).with_order_ids(OrderIds::in_turn(&[], 7));
        orders
            .in_transaction(insert(), None)
            .await
            .map(done)
            .expect("first");
        let err = orders
            .in_transaction(insert(), None)
            .await
            .map(done)
            .expect_err("every id taken");
        assert!(matches!(err, OrderError::Repository(_)), "{err}");
        let listed = orders
            .list(VisibleOrders::All, OrderFilter::default(), None, 10)
            .await
            .expect("list");
        assert_eq!(listed.len(), 1);
    }
}
