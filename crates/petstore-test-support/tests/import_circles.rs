//! No import circle inside any crate of the workspace: at every level of a crate's module tree,
//! the sibling modules import each other without a circle (`sql::connection -> sql::errors ->
//! sql::connection` is one), so each can be read and changed on its own. `cargo tree` and the
//! crate boundaries keep the crates in order; this keeps what is inside each of them.
//!
//! The check reads the sources: every `crate::...` and `super::...` path in a module's non-test
//! code (comments, `#[cfg(test)]` items and `tests.rs` files left out) is resolved to the module
//! it names, and counts as an edge between the two siblings that contain the importer and the
//! imported under their closest common parent. A module using its parent or its own children is
//! no such edge.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path inside a crate: `[]` for the crate root, `["sql", "connection"]`.
type ModulePath = Vec<String>;

/// Sibling edges, keyed by the parent the siblings share.
type Graphs = BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>>;

fn workspace_crates() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found: Vec<PathBuf> = fs::read_dir(&crates)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    found.sort();
    found
}

fn source_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The module a file is: `lib.rs` the root, `a.rs` and `a/mod.rs` `a`, `a/b.rs` `a::b`.
fn module_of(relative: &Path) -> ModulePath {
    let mut path: ModulePath = relative
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

/// `source` without its comments (everything after `//` on a line) and its `#[cfg(test)]`
/// items: the item after each such attribute is dropped, a one-line item up to its `;`, a block
/// up to its closing brace.
fn non_test_code(source: &str) -> String {
    let source: String = source
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = String::new();
    let mut rest = source.as_str();
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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a use tree starting at `text` names: `a::b`, `a::{b, c::d}`, `{a, b::c}`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        return group_items(group).into_iter().flat_map(use_tree).collect();
    }
    let ident: String = text.chars().take_while(|c| is_ident(*c)).collect();
    if ident.is_empty() {
        return Vec::new();
    }
    match text[ident.len()..].strip_prefix("::") {
        Some(rest) => {
            let tails = use_tree(rest);
            if tails.is_empty() {
                return vec![vec![ident]];
            }
            tails
                .into_iter()
                .map(|tail| std::iter::once(ident.clone()).chain(tail).collect())
                .collect()
        }
        None => vec![vec![ident]],
    }
}

/// The items of a `{...}` group, from just after its `{`.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0_usize, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// Every module path `code`, in module `module`, reaches through `crate::` or `super::`.
fn referenced(code: &str, module: &ModulePath) -> Vec<ModulePath> {
    let mut found = Vec::new();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let mut rest = &code[at..];
        let base = if rest.starts_with("crate::") {
            rest = &rest["crate::".len()..];
            Vec::new()
        } else {
            // `super::super::x` is counted once, at its first `super`.
            if code[..at].ends_with("super::") {
                continue;
            }
            let mut base = module.clone();
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            base
        };
        for tail in use_tree(rest) {
            let mut path = base.clone();
            path.extend(tail);
            found.push(path);
        }
    }
    found
}

/// The sibling graphs of the crate whose sources are in `src`.
fn sibling_graphs(src: &Path) -> Graphs {
    let mut files = Vec::new();
    source_files(src, &mut files);
    let modules: BTreeMap<ModulePath, String> = files
        .iter()
        .filter(|file| {
            !file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with("tests.rs")
        })
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap();
            let code = non_test_code(&fs::read_to_string(file).unwrap());
            (module_of(relative), code)
        })
        .collect();
    let mut graphs = Graphs::new();
    for (module, code) in &modules {
        for path in referenced(code, module) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|len| path[..len].to_vec())
                .find(|prefix| modules.contains_key(prefix))
            else {
                continue;
            };
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // A module's own parent or child: not an edge between siblings.
            if common == module.len() || common == target.len() {
                continue;
            }
            graphs
                .entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    graphs
}

/// A circle through the last module of `path`, if there is one.
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

fn circles(graphs: &Graphs) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, graph) in graphs {
        for start in graph.keys() {
            if let Some(circle) = circle_from(graph, &mut vec![start.clone()]) {
                let parent = if parent.is_empty() {
                    "crate".to_owned()
                } else {
                    parent.join("::")
                };
                found.push(format!("in {parent}: {}", circle.join(" -> ")));
                break;
            }
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle_at_any_level() {
    let crates = workspace_crates();
    assert!(crates.len() >= 6, "found only {crates:?}");
    let mut found = Vec::new();
    for src in &crates {
        for circle in circles(&sibling_graphs(src)) {
            found.push(format!("{}: {circle}", src.parent().unwrap().display()));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The top-level modules of the crate in `src` that declare a route table
/// (`static ...: Routes = Routes {`): the resources, and the service's own endpoints.
fn route_owners(src: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    source_files(src, &mut files);
    files
        .iter()
        .filter_map(|file| {
            let module = module_of(file.strip_prefix(src).unwrap());
            let [name] = module.as_slice() else {
                return None;
            };
            let code = non_test_code(&fs::read_to_string(file).unwrap());
            code.contains(": Routes = Routes {").then(|| name.clone())
        })
        .collect()
}

#[test]
fn in_the_http_adapter_only_the_app_and_the_document_know_the_resources() {
    let src = workspace_crates()
        .into_iter()
        .find(|src| src.ends_with("petstore-http/src"))
        .unwrap();
    let resources = route_owners(&src);
    let graphs = sibling_graphs(&src);
    let top = &graphs[&Vec::new()];
    // The check reads what a resource imports: each builds its table with `routing`'s types.
    assert!(resources.len() >= 2, "{resources:?}");
    for resource in &resources {
        assert!(top[resource].contains("routing"), "{resource}: {top:?}");
    }
    for (module, imports) in top {
        if !["app", "openapi"].contains(&module.as_str()) {
            let known: Vec<_> = imports.intersection(&resources).collect();
            assert!(known.is_empty(), "{module} imports a resource: {known:?}");
        }
    }
}

#[test]
fn the_check_sees_nested_paths_and_circles() {
    let module: ModulePath = vec!["sql".into(), "connection".into()];
    let code = non_test_code(
        "use super::{errors::{self, Detail}, metrics};\nuse crate::{a::b, c};\n\
         // use crate::commented;\n#[cfg(test)]\nmod tests {\n    use crate::hidden;\n}\n\
         fn f() { super::super::top::g(); }\n",
    );
    let paths: BTreeSet<String> = referenced(&code, &module)
        .into_iter()
        .map(|path| path.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "sql::errors::self",
            "sql::errors::Detail",
            "sql::metrics",
            "a::b",
            "c",
            "top::g"
        ]
        .into_iter()
        .map(str::to_owned)
        .collect()
    );
    let graph = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    let graphs = Graphs::from([(vec!["sql".to_owned()], graph)]);
    assert_eq!(circles(&graphs), ["in sql: a -> b -> c -> a"]);
}
