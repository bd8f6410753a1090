//! The reliability scenarios `make reliability-test` runs (part of `make test-all`): each puts
//! the real binary under a load or a fault that takes a minute or thousands of connections to
//! build, and checks what its clients would notice. `make test` runs a shorter form of each.

mod connection_bound;
mod drain_resets;
mod held_reader;
mod mixed_soak;
