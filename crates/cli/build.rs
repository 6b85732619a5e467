//! Records the commit the binary is built from, for `sluice --version`.
//! Outside a git checkout (a source tarball) it says so instead.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let described = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => format!("commit {c}"),
        None => "commit unknown".to_string(),
    };
    println!("cargo:rustc-env=SLUICE_COMMIT={described}");
    // Build again when HEAD moves: HEAD itself, the branch it names, and
    // the packed refs.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("packed-refs").display()
        );
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(reference).display());
        }
    }
}
