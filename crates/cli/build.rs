//! Records the commit the binary is built from, for `sluice --version`.
//! Outside a git checkout (a source tarball, a container build, which
//! copies no `.git`) it takes `SLUICE_BUILD_COMMIT` from the environment,
//! or says the commit is unknown.

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
    println!("cargo:rerun-if-env-changed=SLUICE_BUILD_COMMIT");
    let given = std::env::var("SLUICE_BUILD_COMMIT")
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric()));
    let described = match git(&["rev-parse", "--short=12", "HEAD"]).or(given) {
        Some(c) => format!("commit {c}"),
        None => "commit unknown".to_string(),
    };
    println!("cargo:rustc-env=SLUICE_COMMIT={described}");
    // Build again when HEAD moves: HEAD itself, the branch it names, and
    // the packed refs. Only files that exist are named: cargo rebuilds at
    // every run for a named file that is missing (a branch whose ref is
    // packed, or a worktree, whose refs live in the common directory).
    let watch = |path: &Path| {
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watch(&Path::new(&dir).join("HEAD"));
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        let common = Path::new(&common);
        watch(&common.join("packed-refs"));
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch(&common.join(reference));
        }
    }
}
