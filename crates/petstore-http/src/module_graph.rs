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

/// The code of a file without its `#[cfg(test)]` parts (tests may use anything).
fn non_test_code(source: &str) -> &str {
    source.split("#[cfg(test)]").next().unwrap()
}

/// The top-level modules `code` names as `crate::name` or inside `use crate::{...}`.
fn imported(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group.split(',').map(|item| item.trim()).collect()
        } else {
            vec![rest]
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

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|file| top_module(file.strip_prefix(&src).unwrap()))
        .filter(|name| name != "lib")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let from = top_module(relative);
        let is_test_file = relative
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("tests.rs");
        if from == "lib" || is_test_file {
            continue;
        }
        let source = fs::read_to_string(file).unwrap();
        let mut to = imported(non_test_code(&source), &modules);
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
    assert!(
        graph.contains_key("pets") && graph.contains_key("state"),
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
    let modules = BTreeSet::from(["state".to_owned(), "pets".to_owned()]);
    assert_eq!(
        imported("use crate::{pets, state::X};\nuse crate::other;", &modules),
        modules
    );
}
