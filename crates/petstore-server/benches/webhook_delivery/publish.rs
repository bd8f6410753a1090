//! Writes the webhook benchmark's table into `docs/benchmarks.md`, between its own markers
//! (section "Webhook deliveries"); a run of another build (`make bench PGO=1`) only prints it.

use crate::docs_blocks::{measures_another_build, repository_file, rewrite};

const MARKERS: (&str, &str) = (
    "<!-- make bench: webhooks -->",
    "<!-- /make bench: webhooks -->",
);

/// Writes `table` into `docs/benchmarks.md`, or says why it did not.
pub fn publish(table: &str) {
    if measures_another_build() {
        println!("\nanother build measured (PETSTORE_BINARY): docs/benchmarks.md left as it is");
        return;
    }
    rewrite(
        &repository_file("docs/benchmarks.md"),
        &[(MARKERS, table.to_owned())],
    );
}
