//! A test that the crate's top-level modules import each other without a circle: each resource
//! (`pets`, `orders`) depends on what is shared (state, errors, body reading...), the OpenAPI
//! document on the resources, and nothing shared on a resource or on the document. A circle
//! (as once ran handlers -> state -> openapi -> handlers) means a module can no longer be
//! understood or changed on its own.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level module a source file belongs to (`pets/dto.rs` -> `pets`).
fn top_module(relative: &Path) -> String {
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

/// The code of a file without its `#[cfg(test)]` items (tests may use anything): the item
/// after each such attribute is dropped, a one-line item up to its `;`, a block up to its
/// closing brace. What follows it is kept.
fn non_test_code(source: &str) -> String {
    let mut kept = String::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let end = match (item.find(';'), item.find('{')) {
            (Some(semicolon), Some(brace)) if brace < semicolon => block_end(item, brace),
            (Some(semicolon), _) => semicolon + 1,
            (None, Some(brace)) => block_end(item, brace),
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    kept.push_str(rest);
    kept
}

/// Where the block opened at `open` ends (just past its matching `}`).
fn block_end(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (at, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + at + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The names at the top level of a `{...}` group, from just after its `{` (`a::{b, c}, d}`
/// gives `a::{b, c}` and `d`).
fn top_level_names(group: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let (mut depth, mut start) = (0_usize, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                names.push(group[start..at].trim());
                return names;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(group[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    names.push(group[start..].trim());
    names
}

/// The top-level modules `code` names as `crate::name` or inside `use crate::{...}`.
fn imported(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let names = match rest.strip_prefix('{') {
            Some(group) => top_level_names(group),
            None => vec![rest],
        };
        for name in names {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                found.insert(name);
            }
        }
    }
    found
}

fn source_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The modules lib.rs declares (`mod name;`, `pub mod name;`).
fn declared_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').to_owned())
        })
        .collect()
}

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|file| top_module(file.strip_prefix(&src).unwrap()))
        .filter(|name| name != "lib")
        .collect();
    // Modules that exist only in tests (`#[cfg(test)] mod module_graph;` in lib.rs): the code
    // the crate is made of is what lib.rs declares without the attribute.
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let crate_modules = declared_modules(&non_test_code(&lib));
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let from = top_module(relative);
        let is_test_file = relative
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("tests.rs");
        if !crate_modules.contains(&from) || is_test_file {
            continue;
        }
        let source = fs::read_to_string(file).unwrap();
        let mut to = imported(&non_test_code(&source), &modules);
        to.remove(&from);
        graph.entry(from).or_default().extend(to);
    }
    graph
}

/// A circle through `start`, if there is one.
fn circle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let last = path.last().unwrap().clone();
    for next in graph.get(&last).into_iter().flatten() {
        if let Some(at) = path.iter().position(|seen| seen == next) {
            let mut circle = path[at..].to_vec();
            circle.push(next.clone());
            return Some(circle);
        }
        path.push(next.clone());
        if let Some(circle) = circle_from(graph, path) {
            return Some(circle);
        }
        path.pop();
    }
    None
}

#[test]
fn top_level_modules_import_each_other_without_a_circle() {
    let graph = module_graph();
    // What pets/mod.rs imports after its `#[cfg(test)]` re-export is seen too.
    assert!(
        ["state", "routing", "edge"]
            .iter()
            .all(|shared| graph["pets"].contains(*shared)),
        "{graph:?}"
    );
    for start in graph.keys() {
        if let Some(circle) = circle_from(&graph, &mut vec![start.clone()]) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
    // The resources are leaves for everything but the document and the app.
    for (module, imports) in &graph {
        if !["app", "openapi"].contains(&module.as_str()) {
            assert!(
                !imports.contains("pets") && !imports.contains("orders"),
                "{module} imports a resource: {imports:?}"
            );
        }
    }
}

#[test]
fn the_check_sees_a_circle_when_there_is_one() {
    let graph = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(
        circle_from(&graph, &mut vec!["a".to_owned()]),
        Some(
            vec!["a", "b", "c", "a"]
                .into_iter()
                .map(str::to_owned)
                .collect()
        )
    );
    let modules: BTreeSet<String> = ["state", "pets", "routing", "json"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        imported(
            "use crate::{pets::{a, b}, state::X};\nuse crate::other;\nuse crate::routing::get;",
            &modules
        ),
        ["pets", "routing", "state"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    );
    // Test items are left out, and what follows them is still read.
    let source = "#[cfg(test)]\npub(crate) use crate::edge::json::X;\nuse crate::state;\n\
                  #[cfg(test)]\nmod tests {\n    use crate::{pets, json};\n}\nuse crate::routing;\n";
    assert_eq!(
        imported(&non_test_code(source), &modules),
        ["routing", "state"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    );
}
