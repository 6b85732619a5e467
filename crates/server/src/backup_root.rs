//! Where CreateBackup may write (rule D8): only new directories under the
//! one the operator configured (`--backup-dir`), so that a client allowed
//! to take backups cannot make the server write a copy of its data, the
//! receipt handles' key included, anywhere else its user may write.

use std::io;
use std::path::{Component, Path, PathBuf};

use sluice_core::SqsError;

/// The configured backup directory, canonical (symbolic links resolved),
/// so that a path's place in it is decided on real directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupRoot {
    dir: PathBuf,
}

impl BackupRoot {
    /// The existing directory `dir`, canonicalized.
    pub fn new(dir: &Path) -> io::Result<Self> {
        let dir = std::fs::canonicalize(dir)?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            ));
        }
        Ok(Self { dir })
    }

    /// The directory, canonical.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The absolute path of the backup `requested` names: relative to the
    /// root, or absolute inside it. Refused: `..` anywhere, a path without
    /// a final name, and one whose parent, once its symbolic links are
    /// resolved, is not the root or under it. Whether the backup itself
    /// may be written there (not existing yet) is the engine's check.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, SqsError> {
        let invalid = |why: String| SqsError::invalid_value("Directory", requested, &why);
        let path = Path::new(requested);
        if requested.is_empty() {
            return Err(invalid("The backup directory needs a name.".into()));
        }
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(invalid(
                "The backup directory must not contain `..`: name a directory inside the \
                 server's backup directory."
                    .into(),
            ));
        }
        let joined = self.dir.join(path);
        let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
            return Err(invalid("The backup directory needs a name.".into()));
        };
        let outside = || {
            invalid(format!(
                "Backups are written only inside the server's backup directory {}.",
                self.dir.display()
            ))
        };
        let parent = match std::fs::canonicalize(parent) {
            Ok(parent) => parent,
            // A parent outside the root is refused as outside whether or not it exists.
            Err(_) if !parent.starts_with(&self.dir) => return Err(outside()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(invalid(format!(
                    "The directory {} does not exist in the server's backup directory.",
                    parent.display()
                )));
            }
            Err(e) => return Err(invalid(format!("{}: {e}", parent.display()))),
        };
        if !parent.starts_with(&self.dir) {
            return Err(outside());
        }
        Ok(parent.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, BackupRoot) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("backups")).unwrap();
        std::fs::create_dir(dir.path().join("backups/nightly")).unwrap();
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        let root = BackupRoot::new(&dir.path().join("backups")).unwrap();
        (dir, root)
    }

    fn refused(root: &BackupRoot, requested: &str) -> String {
        let e = root.resolve(requested).expect_err(requested);
        assert_eq!(e.code, sluice_core::ErrorCode::InvalidParameterValue);
        e.message
    }

    /// D8: names inside the root resolve into it, relative or absolute.
    #[test]
    fn d8_paths_inside_the_root_resolve_into_it() {
        let (_dir, root) = root();
        let base = root.path().to_path_buf();
        assert_eq!(root.resolve("b1").unwrap(), base.join("b1"));
        assert_eq!(root.resolve("./b1").unwrap(), base.join("b1"));
        assert_eq!(root.resolve("nightly/b2").unwrap(), base.join("nightly/b2"));
        let absolute = base.join("nightly/b3");
        assert_eq!(root.resolve(absolute.to_str().unwrap()).unwrap(), absolute);
    }

    /// D8: `..`, absolute paths elsewhere, the root itself and a parent
    /// that is missing are refused.
    #[test]
    fn d8_paths_leaving_the_root_are_refused() {
        let (dir, root) = root();
        assert!(refused(&root, "../elsewhere/b").contains(".."));
        assert!(refused(&root, "nightly/../../elsewhere/b").contains(".."));
        let elsewhere = dir.path().join("elsewhere/b");
        assert!(refused(&root, elsewhere.to_str().unwrap()).contains("only inside"));
        assert!(refused(&root, "/tmp/definitely-not-there/b").contains("only inside"));
        assert!(refused(&root, root.path().to_str().unwrap()).contains("only inside"));
        assert!(refused(&root, "").contains("needs a name"));
        assert!(refused(&root, "/").contains("needs a name"));
        assert!(refused(&root, "missing/b").contains("does not exist"));
    }

    /// D8: a symbolic link inside the root that points out of it does not
    /// take a backup out.
    #[cfg(unix)]
    #[test]
    fn d8_a_symlink_out_of_the_root_is_refused() {
        let (dir, root) = root();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), root.path().join("out")).unwrap();
        assert!(refused(&root, "out/b").contains("only inside"));
        // A link to a directory inside the root is followed.
        std::os::unix::fs::symlink(root.path().join("nightly"), root.path().join("in")).unwrap();
        assert_eq!(root.resolve("in/b").unwrap(), root.path().join("nightly/b"));
    }
}
