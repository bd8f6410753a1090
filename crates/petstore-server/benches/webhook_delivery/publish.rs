//! Writes the webhook benchmark's table into `docs/benchmarks.md`, between its own markers
//! (section "Webhook deliveries").

use crate::docs_blocks::{repository_file, rewrite};

const MARKERS: (&str, &str) = (
    "<!-- make bench: webhooks -->",
    "<!-- /make bench: webhooks -->",
);

/// Writes `table` into `docs/benchmarks.md`, or says why it did not.
pub fn publish(table: &str) {
    rewrite(
        &repository_file("docs/benchmarks.md"),
        &[(MARKERS, table.to_owned())],
    );
}
