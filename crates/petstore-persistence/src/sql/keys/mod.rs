//! The API keys in SQL: the key registry on the `api_keys` table.

pub(crate) mod registry;
