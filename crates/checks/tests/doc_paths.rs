//! Guards the docs against paths that no longer exist: every path-like
//! mention (`crates/…`, `docs/…`, `scripts/…`, …) in README.md and docs/
//! must name a file or folder of the tree. The reading of the pages is
//! `scripts/check-doc-paths` (Python, so it also runs alone); this runs it
//! with the workspace's tests.

use std::path::Path;
use std::process::Command;

#[test]
fn the_docs_name_only_paths_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/check-doc-paths"))
        .current_dir(&root)
        .output()
        .expect("python3 runs scripts/check-doc-paths");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("path mentions exist"), "{text}");
}
