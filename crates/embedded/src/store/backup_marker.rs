//! The marker of an unfinished backup: written by the backup
//! (`crate::backup`), refused by the start-up and named by the store's
//! error for it.

/// The file an online backup writes first into the directory it fills
/// and removes last, before it renames the directory to its name: a
/// server refuses to start on a directory holding it.
pub const INCOMPLETE_BACKUP_MARKER: &str = "BACKUP-INCOMPLETE";
