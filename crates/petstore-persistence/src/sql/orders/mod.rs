//! The orders in SQL: their repository, whose transactions change a pet and store its order
//! together, and where new order ids come from.

pub(crate) mod order_ids;
pub(crate) mod repository;
