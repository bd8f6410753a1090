//! Who may see and move which orders. An order belongs to the key that placed it: a key sees and
//! cancels its own orders only, while the store's staff (a `store` key) see every order, cancel
//! any, and are the only ones who approve and deliver. Orders placed before orders had owners
//! belong to no key, so only the staff see them.

use crate::{KeyId, KeyScope, Order, OrderAction};

/// The authenticated caller: its key's id (the owner of the orders it places) and the key's
/// scope, which decide what it may do with pets and orders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    key: KeyId,
    scope: KeyScope,
}

/// Whose orders a caller may see: what a listing is narrowed to, in the query itself (a page
/// filtered afterwards would come back short, or empty with more to follow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisibleOrders {
    /// Every order, ownerless ones included: the staff's view.
    All,
    /// Only the orders this key placed.
    PlacedBy(KeyId),
}

impl Caller {
    pub const fn new(key: KeyId, scope: KeyScope) -> Self {
        Self { key, scope }
    }

    /// The key: the owner of the orders it places.
    pub const fn key(&self) -> &KeyId {
        &self.key
    }

    pub const fn scope(&self) -> KeyScope {
        self.scope
    }

    /// Whether this is the store's staff.
    pub const fn is_staff(&self) -> bool {
        self.scope.allows(KeyScope::Store)
    }

    /// The orders this caller may see.
    pub fn visible(&self) -> VisibleOrders {
        if self.is_staff() {
            VisibleOrders::All
        } else {
            VisibleOrders::PlacedBy(self.key.clone())
        }
    }

    /// Whether this caller may see `order` (and so learn that it exists).
    pub fn can_see(&self, order: &Order) -> bool {
        self.is_staff() || order.placed_by() == Some(&self.key)
    }

    /// Whether this caller's scope may place orders.
    pub const fn may_place(&self) -> bool {
        self.scope.allows(KeyScope::Write)
    }

    /// Whether this caller's scope may take `action` (on an order it can see).
    pub const fn may(&self, action: OrderAction) -> bool {
        self.scope.allows(action.scope_needed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewOrder, OrderId, OrderQuantity, OrderStatus, PetId};

    fn key(digit: char) -> KeyId {
        KeyId::parse(&digit.to_string().repeat(32)).unwrap()
    }

    fn order_of(owner: Option<KeyId>) -> Order {
        Order::restore(
            OrderId::new(1),
            PetId::new(2),
            OrderQuantity::ONE,
            OrderStatus::Placed,
            None,
            owner,
        )
    }

    #[test]
    fn a_key_sees_its_own_orders_and_the_staff_every_order() {
        let mine =
            NewOrder::new(PetId::new(2), OrderQuantity::ONE).into_order(OrderId::new(1), key('a'));
        let theirs = order_of(Some(key('b')));
        let ownerless = order_of(None);
        for scope in [KeyScope::Read, KeyScope::Write] {
            let caller = Caller::new(key('a'), scope);
            assert!(caller.can_see(&mine), "{scope}");
            assert!(!caller.can_see(&theirs), "{scope}");
            assert!(!caller.can_see(&ownerless), "{scope}");
            assert_eq!(caller.visible(), VisibleOrders::PlacedBy(key('a')));
        }
        let staff = Caller::new(key('c'), KeyScope::Store);
        assert!([mine, theirs, ownerless]
            .iter()
            .all(|order| staff.can_see(order)));
        assert_eq!(staff.visible(), VisibleOrders::All);
    }

    #[test]
    fn only_the_staff_approve_and_deliver_and_a_writer_cancels() {
        let caller = |scope| Caller::new(key('a'), scope);
        let read = caller(KeyScope::Read);
        assert!(!read.may_place());
        assert!(![
            OrderAction::Approve,
            OrderAction::Deliver,
            OrderAction::Cancel
        ]
        .iter()
        .any(|action| read.may(*action)));
        let write = caller(KeyScope::Write);
        assert!(write.may_place() && write.may(OrderAction::Cancel));
        assert!(!write.may(OrderAction::Approve) && !write.may(OrderAction::Deliver));
        let staff = caller(KeyScope::Store);
        assert!(staff.may_place());
        assert!([
            OrderAction::Approve,
            OrderAction::Deliver,
            OrderAction::Cancel
        ]
        .iter()
        .all(|action| staff.may(*action)));
    }
}
