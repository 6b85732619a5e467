//! docs/actions.md maps every action to its code: this checks that its
//! tables list exactly the operations of the models the server serves
//! (`models/`: each API's dispatch is an exhaustive match over them, so
//! the compiler holds the server to the same list), each once with its
//! generated input type, and that every file and every
//! `Broker::`/`Coordination::`/`Topics::`/`IdempotencyKeys::` method they
//! name exists, so the page
//! cannot fall behind a new operation, a moved file or a renamed method.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace's `crates/` directory.
fn crates() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each served operation with its generated input type:
/// (`CreateQueue`, `sqs::CreateQueueRequest`). Two APIs may share an
/// operation's name (SQS's and SNS's AddPermission); the input tells them
/// apart.
fn served() -> BTreeSet<(String, String)> {
    let models = crates().join("../models");
    let mut out = BTreeSet::new();
    for (file, module) in [
        ("sqs-query-service-2.json", "sqs"),
        ("sluice-extensions.json", "sluice"),
        ("sns-service-2.json", "sns"),
    ] {
        let model: serde_json::Value =
            serde_json::from_str(&read(&models.join(file))).expect("a model parses");
        for (name, op) in model["operations"].as_object().expect("operations") {
            let input = op["input"]["shape"].as_str().expect("an input shape");
            out.insert((name.clone(), format!("{module}::{input}")));
        }
    }
    out
}

/// The rows of the page's action tables, as cells: the rows after a
/// header whose first cell is `Action`.
fn rows(page: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in page.lines() {
        let Some(inner) = line.trim().strip_prefix('|') else {
            in_table = false;
            continue;
        };
        let cells: Vec<String> = inner
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        if cells[0] == "Action" {
            in_table = true;
        } else if in_table && !cells[0].starts_with("---") {
            rows.push(cells);
        }
    }
    rows
}

/// The `backticked` spans of a cell.
fn code_spans(cell: &str) -> impl Iterator<Item = &str> {
    cell.split('`').skip(1).step_by(2)
}

#[test]
fn the_page_lists_every_served_operation_once_with_its_input() {
    let served = served();
    assert!(served.len() > 30, "the models were not read: {served:?}");
    let page = read(&crates().join("../docs/actions.md"));
    let mut listed = BTreeSet::new();
    for row in rows(&page) {
        let input: Vec<&str> = code_spans(&row[2]).collect();
        assert_eq!(input.len(), 1, "{}: one input type", row[0]);
        let entry = (row[0].clone(), input[0].to_string());
        assert!(listed.insert(entry.clone()), "listed twice: {entry:?}");
    }
    let missing: Vec<_> = served.difference(&listed).collect();
    let unknown: Vec<_> = listed.difference(&served).collect();
    assert!(missing.is_empty(), "docs/actions.md lacks {missing:?}");
    assert!(
        unknown.is_empty(),
        "no model has these (or not with that input): {unknown:?}"
    );
}

#[test]
fn every_file_and_method_the_page_names_exists() {
    let crates = crates();
    let page = read(&crates.join("../docs/actions.md"));
    let broker = read(&crates.join("broker/src/lib.rs"));
    let coordination = read(&crates.join("broker/src/coordination.rs"));
    let topics = read(&crates.join("broker/src/topics.rs"));
    let idempotency = read(&crates.join("broker/src/idempotency.rs"));
    let mut checked = 0;
    for row in rows(&page) {
        assert_eq!(row.len(), 6, "row of 6 cells: {row:?}");
        for cell in &row[1..] {
            for span in code_spans(cell) {
                let trait_source = if let Some(m) = span.strip_prefix("Broker::") {
                    Some((m, &broker))
                } else if let Some(m) = span.strip_prefix("Topics::") {
                    Some((m, &topics))
                } else if let Some(m) = span.strip_prefix("IdempotencyKeys::") {
                    Some((m, &idempotency))
                } else {
                    span.strip_prefix("Coordination::")
                        .map(|m| (m, &coordination))
                };
                if let Some((method, source)) = trait_source {
                    assert!(
                        source.contains(&format!("fn {method}("))
                            || source.contains(&format!("fn {method}<")),
                        "{}: no method {span}",
                        row[0]
                    );
                    checked += 1;
                } else if span.contains("/src/") {
                    assert!(
                        crates.join(span).exists(),
                        "{}: no file {span} under crates/",
                        row[0]
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} names checked");
}

#[test]
fn reads_table_rows() {
    let page =
        "| Action | Server |\n|---|---|\n| A | `x.rs` |\n\ntext\n| other | table |\n| B | y |\n";
    let names: Vec<_> = rows(page).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(names, ["A"]);
    assert_eq!(code_spans("`a`, `b` and c").collect::<Vec<_>>(), ["a", "b"]);
}
