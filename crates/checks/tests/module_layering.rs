//! Guards the code rules of every crate's sources: no two modules of a
//! crate import each other, directly or around a circle (the crate root
//! and `mod.rs` files included: `crate::`, `super::`, `self::` and
//! child-module paths are all followed); the server's top-level modules
//! keep the layers `crates/server/src/lib.rs` describes; and no source
//! file grows past ~600 lines of non-test code. Read from the sources, so
//! that the properties stay true. (Which crate may depend on which is
//! `crate_layering.rs`'s.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Most lines of non-test code a source file may have.
const MAX_CODE_LINES: usize = 600;

/// The workspace's `crates/` directory.
fn crates() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
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

/// The code of `text` with `//` comments removed (doc comments name
/// modules too, without importing them).
fn code(text: &str) -> String {
    let lines = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    without_strings(&lines)
}

/// `text` with the contents of its string literals (plain and raw) left
/// out: a path inside a string (generated code, a message) is no import.
fn without_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // A raw string: r"…", r#"…"#, br"…".
        if c == 'r' && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) {
            let mut j = i + 1;
            while j < chars.len() && chars[j] == '#' {
                j += 1;
            }
            if j < chars.len() && chars[j] == '"' {
                let hashes = j - i - 1;
                let mut k = j + 1;
                loop {
                    if k >= chars.len() {
                        break;
                    }
                    if chars[k] == '"'
                        && chars[k + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|h| **h == '#')
                            .count()
                            == hashes
                    {
                        k += 1 + hashes;
                        break;
                    }
                    k += 1;
                }
                out.push_str("\"\"");
                i = k;
                continue;
            }
        }
        // A character literal ('"', '\'', 'x'), not a lifetime.
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\\') {
                if let Some(end) = (i + 2..chars.len()).find(|&k| chars[k] == '\'') {
                    out.push_str("' '");
                    i = end + 1;
                    continue;
                }
            } else if chars.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
                continue;
            }
        }
        if c == '"' {
            let mut k = i + 1;
            while k < chars.len() && chars[k] != '"' {
                if chars[k] == '\\' {
                    k += 1;
                }
                k += 1;
            }
            out.push_str("\"\"");
            i = k + 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Every crate's library and binary sources, not only the server's: the
/// size rule is the workspace's. The suites that are tests through and
/// through (the conformance and model-based suites every engine runs, and
/// `tests.rs` files) are left out, as test code is.
#[test]
fn no_file_has_more_than_600_lines_of_non_test_code() {
    let crates = crates();
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
        let code_lines = without_test_modules(&text).lines().count();
        if code_lines > MAX_CODE_LINES {
            long.push(format!("{} ({code_lines})", path.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_CODE_LINES} lines: {long:?}"
    );
}

/// `text` without its inline test modules (`#[cfg(test)] mod name { … }`),
/// whatever follows them.
fn without_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let head = after.trim_start();
        let head = head.strip_prefix("pub(crate) ").unwrap_or(head);
        let Some(open) = head
            .strip_prefix("mod ")
            .and_then(|m| m.find(['{', ';']).map(|i| (i, m)))
            .filter(|(i, m)| m.as_bytes()[*i] == b'{')
            .map(|(i, m)| text.len() - m.len() + i)
        else {
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        let mut depth = 0usize;
        let mut end = text.len();
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &text[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn test_modules_are_left_out_wherever_they_are() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() { if x { } }\n}\nfn b() {}\n";
    assert_eq!(without_test_modules(text), "fn a() {}\n\nfn b() {}\n");
    let declared = "#[cfg(test)]\nmod tests;\nfn c() {}\n";
    assert_eq!(without_test_modules(declared), declared);
}

/// A module's path in its crate (`[]` for the crate root).
type ModPath = Vec<String>;

/// The modules of the crate whose sources are in `src`, by path, with
/// their files; the modules declared under `#[cfg(test)]` left out.
fn crate_modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeMap::new();
    for path in files {
        let rel = path
            .strip_prefix(src)
            .expect("under src")
            .with_extension("");
        let mut parts: ModPath = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            parts.clear();
        }
        modules.insert(parts, path);
    }
    let mut test_only = BTreeSet::new();
    for (module, path) in &modules {
        let text = std::fs::read_to_string(path).expect("source file");
        for (at, _) in text.match_indices("#[cfg(test)]") {
            let after = text[at + "#[cfg(test)]".len()..].trim_start();
            let after = after.strip_prefix("pub(crate) ").unwrap_or(after);
            if let Some(decl) = after.strip_prefix("mod ")
                && let Some((name, _)) = decl.split_once(';')
                && !name.contains('{')
            {
                let mut child = module.clone();
                child.push(name.trim().to_string());
                test_only.insert(child);
            }
        }
    }
    modules.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
    modules
}

/// The paths of the `use` tree or path expression at the start of `text`
/// (`a::{b::C, d}` is `a::b::C` and `a::d`), as segments.
fn paths_at(text: &str) -> Vec<ModPath> {
    fn tree(text: &str, prefix: &ModPath, out: &mut Vec<ModPath>) {
        let mut path = prefix.clone();
        let mut rest = text;
        loop {
            rest = rest.trim_start();
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            tree(&group[start..i], &path, out);
                            return;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            tree(&group[start..i], &path, out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if ident.is_empty() {
                break;
            }
            rest = &rest[ident.len()..];
            path.push(ident);
            match rest.trim_start().strip_prefix("::") {
                Some(next) => rest = next,
                None => break,
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    tree(text, &Vec::new(), &mut out);
    out
}

/// Edges `from → to` between the modules of the crate in `src`: every
/// `crate::`, `super::` and `self::` path, and every path through a child
/// module, leads to the deepest module it names (an item of the crate
/// root, `crate::Item`, leads to the root).
fn module_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let modules = crate_modules(src);
    let resolve = |path: &[String]| -> ModPath {
        let path: Vec<String> = path.iter().filter(|s| *s != "self").cloned().collect();
        (0..=path.len())
            .rev()
            .map(|k| path[..k].to_vec())
            .find(|p| modules.contains_key(p))
            .unwrap_or_default()
    };
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let text = without_test_modules(&code(&std::fs::read_to_string(file).expect("source")));
        let targets: &mut BTreeSet<ModPath> = graph.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("::") {
            // The path's first segment ends where this `::` starts.
            let head_start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            if head_start == at || text[..head_start].ends_with("::") {
                continue;
            }
            for path in paths_at(&text[head_start..]) {
                let full: ModPath = match path[0].as_str() {
                    "crate" => path[1..].to_vec(),
                    "super" | "self" => {
                        let mut base = module.clone();
                        let mut rest = &path[..];
                        while let Some(first) = rest.first() {
                            match first.as_str() {
                                "super" => {
                                    base.pop();
                                }
                                "self" => {}
                                _ => break,
                            }
                            rest = &rest[1..];
                        }
                        base.extend(rest.iter().cloned());
                        base
                    }
                    child => {
                        let mut full = module.clone();
                        full.push(child.to_string());
                        if !modules.contains_key(&full) {
                            continue;
                        }
                        full.extend(path[1..].iter().cloned());
                        full
                    }
                };
                let to = resolve(&full);
                if &to != module {
                    targets.insert(to);
                }
            }
        }
    }
    graph
}

/// The import circles of `graph`: its strongly connected components of
/// more than one module.
fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<BTreeSet<ModPath>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        found: Vec<BTreeSet<ModPath>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a ModPath) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    component.insert(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.found
}

/// A circle's modules as `a::b` names (`crate` for the root), sorted.
fn names(circle: &BTreeSet<ModPath>) -> Vec<String> {
    circle
        .iter()
        .map(|m| {
            if m.is_empty() {
                "crate".to_string()
            } else {
                m.join("::")
            }
        })
        .collect()
}

#[test]
fn follows_crate_super_self_and_child_paths() {
    assert_eq!(
        paths_at("crate::{a::B, c::{self, D}, e};"),
        [
            vec!["crate", "a", "B"],
            vec!["crate", "c", "self"],
            vec!["crate", "c", "D"],
            vec!["crate", "e"]
        ]
    );
    let dir = std::env::temp_dir().join(format!("layering-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("lib.rs", "mod a;\npub use a::X;\n");
    write("a/mod.rs", "mod b;\nmod c;\npub struct X;\nuse c::Y;\n");
    write("a/b.rs", "use super::X;\n");
    write(
        "a/c.rs",
        "pub struct Y;\nfn f() { self::g(); crate::a::b::h(); }\n#[cfg(test)]\nmod tests {\n use crate::Z;\n}\n",
    );
    let graph = module_graph(&dir);
    let m = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<ModPath>();
    assert_eq!(graph[&m(&[])], BTreeSet::from([m(&["a"])]));
    assert_eq!(graph[&m(&["a"])], BTreeSet::from([m(&["a", "c"])]));
    assert_eq!(graph[&m(&["a", "b"])], BTreeSet::from([m(&["a"])]));
    assert_eq!(graph[&m(&["a", "c"])], BTreeSet::from([m(&["a", "b"])]));
    // a → c → b → a.
    assert_eq!(
        circles(&graph).iter().map(names).collect::<Vec<_>>(),
        [vec!["a", "a::b", "a::c"]]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every crate's modules, the crate root and `mod.rs` files included. The
/// suites that are tests through and through (the conformance and
/// model-based suites every engine runs) are left out, as test code is.
#[test]
fn no_crate_has_an_import_circle() {
    let crates = crates();
    let mut found = BTreeSet::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut graph = module_graph(&src);
        graph.retain(|m, _| {
            m.first()
                .is_none_or(|f| f != "conformance" && f != "model_tests")
        });
        for targets in graph.values_mut() {
            targets.retain(|m| {
                m.first()
                    .is_none_or(|f| f != "conformance" && f != "model_tests")
            });
        }
        read += graph.len();
        for circle in circles(&graph) {
            found.insert((name.clone(), names(&circle)));
        }
    }
    assert!(read > 200, "read only {read} modules");
    assert!(found.is_empty(), "import circles: {found:?}");
}

/// The edges between the server's top-level modules (`actions` for
/// `src/actions/send.rs`), from its module graph: an import of
/// `crate::alarms::X` from `service::cache` is `service → alarms`.
fn server_top_level() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut top: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (from, targets) in module_graph(&crates().join("server/src")) {
        let Some(from) = from.first() else { continue };
        let entry = top.entry(vec![from.clone()]).or_default();
        for to in targets {
            if let Some(to) = to.first().filter(|to| *to != from) {
                entry.insert(vec![to.clone()]);
            }
        }
    }
    top
}

#[test]
fn paths_in_strings_are_no_imports() {
    assert_eq!(
        without_strings(
            "let a = \"crate::x\"; let b = r#\"crate::\"y\"#; use crate::z; let c = '\"'; fn f<'a>() {}"
        ),
        "let a = \"\"; let b = \"\"; use crate::z; let c = ' '; fn f<'a>() {}"
    );
}

#[test]
fn the_servers_top_level_modules_keep_their_layers() {
    let graph = server_top_level();
    let m = |name: &str| vec![name.to_string()];
    assert!(
        graph.contains_key(&m("api")) && graph.contains_key(&m("service")),
        "read the server's modules: {graph:?}"
    );
    // The components the service holds stay below it and the APIs.
    for component in [
        "move_tasks",
        "long_polls",
        "metrics",
        "auth",
        "policy",
        "depth_history",
        "params",
    ] {
        let imports = graph.get(&m(component)).cloned().unwrap_or_default();
        assert!(
            !imports.contains(&m("service")) && !imports.contains(&m("api")),
            "{component} imports {imports:?}"
        );
    }
    for leaf in ["params", "signing_region", "backup_root", "inbound"] {
        assert!(
            graph.get(&m(leaf)).is_none_or(BTreeSet::is_empty),
            "{leaf} is a leaf: {:?}",
            graph.get(&m(leaf))
        );
    }
    let found: Vec<Vec<String>> = circles(&graph).iter().map(names).collect();
    assert!(
        found.is_empty(),
        "import circles between top-level modules: {found:?}"
    );
}
