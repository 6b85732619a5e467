//! Every behaviour rule a test cites (`V3`, `F13`, …) is defined in
//! docs/rules.md, so a citation always leads somewhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The rule ids in `text`: a family letter then a number from 1, as words.
fn rule_ids(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            let family = w.chars().next();
            let number = w.get(1..).unwrap_or_default();
            matches!(
                family,
                Some(
                    'W' | 'L'
                        | 'V'
                        | 'F'
                        | 'R'
                        | 'M'
                        | 'D'
                        | 'X'
                        | 'A'
                        | 'C'
                        | 'H'
                        | 'N'
                        | 'E'
                        | 'I'
                )
            ) && (1..=2).contains(&number.len())
                && number.chars().all(|c| c.is_ascii_digit())
                && !number.starts_with('0')
        })
        .map(str::to_string)
        .collect()
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("target") && !path.ends_with("node_modules") {
                files(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

#[test]
fn every_cited_rule_is_defined() {
    let rules = std::fs::read_to_string(root().join("docs/rules.md")).expect("docs/rules.md");
    let defined: BTreeSet<String> = rules
        .lines()
        .filter_map(|l| l.strip_prefix("- **"))
        .filter_map(|l| l.split("**").next())
        .map(str::to_string)
        .collect();
    assert!(defined.len() > 50, "rules.md defines {}", defined.len());

    let mut cited: BTreeSet<(String, String)> = BTreeSet::new();
    let mut rust = Vec::new();
    files(&root().join("crates"), "rs", &mut rust);
    for path in rust {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text.lines() {
            if let Some(i) = line.find("//") {
                for id in rule_ids(&line[i..]) {
                    cited.insert((id, path.display().to_string()));
                }
            }
        }
    }
    let mut python = Vec::new();
    files(
        &root().join("tests/clients/python/fidelity"),
        "py",
        &mut python,
    );
    for path in python {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("@case("))
        {
            // @case("category", "RULES", "source"): the second argument.
            if let Some(rules) = line.split('"').nth(3) {
                for id in rule_ids(rules) {
                    cited.insert((id, path.display().to_string()));
                }
            }
        }
    }
    assert!(cited.len() > 100, "found {} citations", cited.len());
    let missing: Vec<_> = cited
        .iter()
        .filter(|(id, _)| !defined.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "cited but not in docs/rules.md: {missing:?}"
    );
}
