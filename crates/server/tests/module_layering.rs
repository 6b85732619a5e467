//! The server crate's top-level modules import each other without circles,
//! and no source file of any crate grows past ~600 lines of non-test code
//! (the project's code rules; the layering is described in `src/lib.rs`). Read from the
//! sources, like `rule_citations.rs`, so that the property stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Most lines of non-test code a source file may have.
const MAX_CODE_LINES: usize = 600;

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`actions` for
/// `src/actions/send.rs`, `http` for `src/http.rs`); `None` for `lib.rs`.
fn top_module(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// The code of `text` with `//` comments removed (doc comments name
/// modules too, without importing them).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` reaches through `crate::` paths, including
/// grouped ones (`use crate::{a::X, b};`).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `sluice_crate::` or `my_crate::` are other paths.
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = text[i + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Names at the group's first level: after `{` and after each
            // top-level comma.
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        found.insert(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

/// Edges `from → to` between distinct top-level modules.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let Some(from) = top_module(&path) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("source file");
        let targets = graph.entry(from.clone()).or_default();
        for to in crate_paths(&code(&text)) {
            if to != from {
                targets.insert(to);
            }
        }
    }
    graph
}

/// A circle in `graph`, as the modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn reads_grouped_and_inline_crate_paths() {
    let text =
        "use crate::{alarms::Alarms, params};\nlet x = crate::http::serve;\nuse sluice_crate::x;";
    let found: Vec<String> = crate_paths(text).into_iter().collect();
    assert_eq!(found, ["alarms", "http", "params"]);
}

#[test]
fn finds_a_circle_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&graph), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn top_level_modules_import_each_other_without_circles() {
    let graph = edges();
    assert!(
        graph.contains_key("actions") && graph.contains_key("service"),
        "read the crate's modules: {graph:?}"
    );
    // The components the service holds stay below it and the actions.
    for component in ["alarms", "move_tasks", "metrics", "consumers", "params"] {
        let imports = graph.get(component).cloned().unwrap_or_default();
        assert!(
            !imports.contains("service") && !imports.contains("actions"),
            "{component} imports {imports:?}"
        );
    }
    assert!(
        graph.get("params").is_none_or(BTreeSet::is_empty),
        "params is a leaf: {:?}",
        graph.get("params")
    );
    assert_eq!(find_cycle(&graph), None, "import circle in {graph:#?}");
}

/// Every crate's library and binary sources, not only the server's: the
/// size rule is the workspace's. The suites that are tests through and
/// through (the conformance and model-based suites every engine runs, and
/// `tests.rs` files) are left out, as test code is.
#[test]
fn no_file_has_more_than_600_lines_of_code_before_its_tests() {
    let crates = src().join("../..");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        rust_files(&entry.path().join("src"), &mut files);
    }
    assert!(files.len() > 100, "found only {} sources", files.len());
    files.retain(|p| {
        !p.components()
            .any(|c| c.as_os_str() == "conformance" || c.as_os_str() == "model_tests")
    });
    let mut long = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("source file");
        // Files that are all tests (`auth/tests.rs`) are declared under #[cfg(test)].
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code_lines = text
            .lines()
            .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
            .count();
        if code_lines > MAX_CODE_LINES {
            long.push(format!("{} ({code_lines})", path.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_CODE_LINES} lines: {long:?}"
    );
}
