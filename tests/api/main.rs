//! End-to-end tests: the built `petstore` binary, real HTTP over a socket, a real SQLite file
//! and a real PostgreSQL database (from `make test`'s throwaway cluster), and the in-memory
//! backend. Every scenario runs against every backend it applies to.

mod auth;
mod catalogue;
mod categories;
mod cli;
mod compression;
mod conditional;
mod connection_bound;
mod cors;
mod create_pet;
mod data_moves;
mod drain;
mod durability;
mod events;
mod events_guarantees;
mod fresh_keys;
mod get_pet;
mod held_connections;
mod held_reader;
mod hostile_input;
mod idempotency;
mod instances;
mod inventory;
mod keyed_operations;
mod list_pets;
mod malformed_http;
mod mixed_writes;
mod openapi;
mod operability;
mod orders;
mod overload;
mod pet_changes;
mod readme;
mod routing;
mod scheduled_backups;
mod side_by_side;
mod slow_clients;
mod startup;
mod token_binding;
mod webhooks;
mod webhooks_guarantees;
