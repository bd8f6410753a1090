//! Writes the webhook benchmark's table into `docs/benchmarks.md`, between its own markers
//! (section "Webhook deliveries"); the marker lines themselves stay.

use std::path::Path;

const MARKERS: (&str, &str) = (
    "<!-- make bench: webhooks -->",
    "<!-- /make bench: webhooks -->",
);

/// `text` with what lies between the markers replaced by `block`; `None` without both.
fn replaced(text: &str, (start, end): (&str, &str), block: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = from + text[from..].find(end)?;
    Some(format!(
        "{}\n{}\n{}",
        &text[..from],
        block.trim_matches('\n'),
        &text[to..]
    ))
}

/// Writes `table` into `docs/benchmarks.md`, or says why it did not.
pub fn publish(table: &str) {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/benchmarks.md"
    ));
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("could not read {}", path.display());
        return;
    };
    let Some(text) = replaced(&text, MARKERS, table) else {
        eprintln!(
            "{} has no {} markers: left as it is",
            path.display(),
            MARKERS.0
        );
        return;
    };
    match std::fs::write(path, text) {
        Ok(()) => println!("\nwritten into docs/benchmarks.md (Webhook deliveries)"),
        Err(error) => eprintln!("could not write {}: {error}", path.display()),
    }
}
