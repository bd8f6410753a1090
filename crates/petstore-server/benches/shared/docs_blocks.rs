//! The blocks of the docs that `make bench` rewrites: what lies between a pair of marker lines,
//! replaced in place (the markers stay).

use std::path::{Path, PathBuf};

/// A file of the repository, from its path below the root: `docs/benchmarks.md`.
pub fn repository_file(below_root: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(below_root)
}

/// `text` with what lies between `markers` replaced by `block`; `None` without both markers.
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

/// Rewrites `path` with each `(markers, block)` in place and says so, or says why it did not
/// (then the file is left as it was).
pub fn rewrite(path: &Path, blocks: &[((&str, &str), String)]) {
    let Ok(mut text) = std::fs::read_to_string(path) else {
        eprintln!("could not read {}", path.display());
        return;
    };
    for (markers, block) in blocks {
        match replaced(&text, *markers, block) {
            Some(new) => text = new,
            None => {
                eprintln!(
                    "{} has no {} markers: left as it is",
                    path.display(),
                    markers.0
                );
                return;
            }
        }
    }
    match std::fs::write(path, text) {
        Ok(()) => println!("written into {}", path.display()),
        Err(error) => eprintln!("could not write {}: {error}", path.display()),
    }
}
