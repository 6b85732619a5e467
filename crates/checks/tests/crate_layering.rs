//! Guards the order of the workspace's crates: each crate depends (as a
//! dependency, a dev-dependency or a build-dependency) only on crates of
//! the levels below its own in [`LEVELS`], never on one of its own level or
//! above, and every crate of `crates/` has a level. Cargo refuses circles
//! between crates; this keeps the intended direction too, so that a
//! subsystem (the alarms, the consumers, the console) never reaches up
//! into the server that holds it, and a library never into the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The intended order, lowest first: the code generator the build
/// scripts of the wire's crates run, leaves, then the wire and the
/// signing arithmetic, the broker trait, what works through it (engines,
/// subsystems, the client), what assembles them (server, config, bench),
/// the in-process test server, the binary, and these checks.
const LEVELS: &[&[&str]] = &[
    &["sluice-codegen"],
    &[
        "sluice-core",
        "sluice-outbound",
        "sluice-console",
        "sluice-keyring",
    ],
    &["sluice-sigv4", "sluice-protocol", "sluice-sns"],
    &["sluice-broker"],
    &[
        "sluice-embedded",
        "sluice-postgres",
        "sluice-alarms",
        "sluice-consumers",
        "sluice-client",
        "sluice-archive",
    ],
    &["sluice-server", "sluice-config", "sluice-bench"],
    &["sluice-testing"],
    &["sluice"],
    &["sluice-checks"],
];

/// The workspace's `crates/` directory.
fn crates() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A crate's package name and the workspace crates it depends on in any
/// kind of dependency table (itself, as an engine's dev-dependency on its
/// own features, left out).
fn manifest(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = doc["package"]["name"]
        .as_str()
        .expect("package.name")
        .to_string();
    let mut tables: Vec<&toml::Table> = Vec::new();
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    for kind in kinds {
        tables.extend(doc.get(kind).and_then(toml::Value::as_table));
    }
    // [target.'cfg(…)'.dependencies] and the like.
    for target in doc
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
    {
        for spec in target.values().filter_map(toml::Value::as_table) {
            for kind in kinds {
                tables.extend(spec.get(kind).and_then(toml::Value::as_table));
            }
        }
    }
    let mut deps = Vec::new();
    for table in tables {
        for (key, value) in table {
            let package = value
                .get("package")
                .and_then(toml::Value::as_str)
                .unwrap_or(key);
            if package.starts_with("sluice") && package != name {
                deps.push(package.to_string());
            }
        }
    }
    deps.sort();
    deps.dedup();
    (name, deps)
}

/// Each crate's level in `levels`.
fn level_of<'a>(levels: &[&[&'a str]]) -> BTreeMap<&'a str, usize> {
    let mut of = BTreeMap::new();
    for (level, names) in levels.iter().enumerate() {
        for name in *names {
            assert!(of.insert(*name, level).is_none(), "{name} listed twice");
        }
    }
    of
}

/// What breaks the order: a crate without a level, a dependency on a
/// crate of the same level or above.
fn violations(crates: &BTreeMap<String, Vec<String>>, levels: &[&[&str]]) -> Vec<String> {
    let of = level_of(levels);
    let mut found = Vec::new();
    for (name, deps) in crates {
        let Some(&level) = of.get(name.as_str()) else {
            found.push(format!("{name} has no level in LEVELS"));
            continue;
        };
        for dep in deps {
            match of.get(dep.as_str()) {
                Some(&below) if below < level => {}
                Some(_) => found.push(format!("{name} depends on {dep}, not below it")),
                None => found.push(format!("{name} depends on {dep}, which has no level")),
            }
        }
    }
    found
}

#[test]
fn no_crate_depends_on_a_crate_above_it() {
    let mut workspace = BTreeMap::new();
    for entry in std::fs::read_dir(crates()).expect("crates").flatten() {
        let path = entry.path().join("Cargo.toml");
        if path.is_file() {
            let (name, deps) = manifest(&path);
            workspace.insert(name, deps);
        }
    }
    assert!(
        workspace.contains_key("sluice-server") && workspace.len() > 15,
        "read the workspace's crates: {workspace:?}"
    );
    let listed = level_of(LEVELS).len();
    assert_eq!(listed, workspace.len(), "LEVELS lists a crate that is gone");
    let found = violations(&workspace, LEVELS);
    assert!(found.is_empty(), "crate order broken: {found:#?}");
}

#[test]
fn finds_a_dependency_on_a_crate_above_or_alongside() {
    let levels: &[&[&str]] = &[&["a"], &["b", "c"], &["d"]];
    let crates = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(n, d)| (n.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    let fine = crates(&[("a", &[]), ("b", &["a"]), ("d", &["b", "c", "a"])]);
    assert!(violations(&fine, levels).is_empty());
    let broken = crates(&[("a", &["b"]), ("b", &["c"]), ("e", &[])]);
    assert_eq!(
        violations(&broken, levels),
        [
            "a depends on b, not below it",
            "b depends on c, not below it",
            "e has no level in LEVELS"
        ]
    );
}
