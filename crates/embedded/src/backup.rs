//! Online backup (rule D7): a copy of a running engine's data directory
//! that a server opens as its own, made while requests go on.
//!
//! The copy's point in time is a redb read transaction taken once the
//! applier holds every change acknowledged before the call: redb keeps that
//! view's pages while the engine goes on writing, and the view names the
//! log segments its messages' data lies in. Those segments are held open
//! before the view is taken, so a checkpoint cannot delete one under the
//! copy (an open file stays readable), and copied whole; a segment a view
//! needs is never deleted before the view, since once no row points into
//! an older segment none ever will again. The copy's newest segment is an
//! empty one: a start reads only the newest, so it replays nothing past
//! the copied store.
//!
//! Everything is written into a hidden sibling directory that holds
//! [`INCOMPLETE_BACKUP_MARKER`] until every file is synced; then the marker
//! goes and the directory is renamed to its name. A crash leaves either no
//! directory of that name or a complete one, and a server refuses to start
//! on a directory that still holds the marker.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sluice_broker::{BackupReport, EngineError, backup_unsupported};
use sluice_core::SqsError;

use crate::engine::EmbeddedBroker;
use crate::open::DATA_FILE;
use crate::store::{INCOMPLETE_BACKUP_MARKER, Store, StoreError};
use crate::wal::{HeldSegments, LOG_DIR, write_empty_segment};

/// Test hook of debug builds only (the end-to-end tests run the debug
/// binary): a pause after each step of the copy, so that a test can kill
/// the server in the middle of a backup. Release builds do not read it.
#[cfg(debug_assertions)]
const PAUSE_ENV: &str = "SLUICE_BACKUP_TEST_PAUSE_MS";

impl EmbeddedBroker {
    /// Copies the engine's data into the new directory `dest` (rule D7).
    pub(crate) async fn backup_to(&self, dest: &Path) -> Result<BackupReport, EngineError> {
        if !self.inner.journal.is_durable() {
            return Err(backup_unsupported(
                "This server runs in memory (--in-memory): it has no data to back up.",
            ));
        }
        let target = Target::new(dest)?;
        // Everything acknowledged so far is in the log; once the applier
        // holds it too, the read transaction below sees it.
        self.inner.journal.readable().wait().await?;
        // The store of now: a reopen after a failed write (rule D5) may
        // have put another in place; while one runs, there is none.
        let Some(store) = self.inner.journal.store()? else {
            return Err(backup_unsupported(
                "This server runs in memory (--in-memory): it has no data to back up.",
            ));
        };
        let dir = target.final_dir.clone();
        let report = tokio::task::spawn_blocking(move || target.write(&store))
            .await
            .map_err(|e| EngineError::Storage(format!("the backup stopped: {e}")))?;
        match report {
            Ok(report) => {
                tracing::info!(
                    directory = %dir.display(),
                    files = report.files,
                    bytes = report.bytes,
                    applied_lsn = report.applied_lsn,
                    "backup complete"
                );
                Ok(report)
            }
            Err(e) => {
                tracing::error!(directory = %dir.display(), error = %e, "backup failed");
                Err(EngineError::Unavailable(format!("The backup failed: {e}")))
            }
        }
    }
}

/// Where a backup goes: the directory asked for, and the hidden one it is
/// written in first.
struct Target {
    final_dir: PathBuf,
    partial: PathBuf,
    parent: PathBuf,
    pause: Option<Duration>,
}

impl Target {
    /// Checks `dest`: absolute, not there yet, in a directory that is.
    fn new(dest: &Path) -> Result<Self, EngineError> {
        let invalid = |why: String| {
            EngineError::Rejected(SqsError::invalid_value(
                "Directory",
                dest.display().to_string(),
                &why,
            ))
        };
        if !dest.is_absolute() {
            return Err(invalid(
                "The backup directory must be an absolute path.".into(),
            ));
        }
        let (Some(parent), Some(name)) = (dest.parent(), dest.file_name()) else {
            return Err(invalid("The backup directory needs a name.".into()));
        };
        if dest.symlink_metadata().is_ok() {
            return Err(invalid(
                "The backup directory already exists: a backup goes into a new directory.".into(),
            ));
        }
        if !parent.is_dir() {
            return Err(invalid(format!(
                "The directory {} does not exist on the server.",
                parent.display()
            )));
        }
        let partial = parent.join(format!(".{}.partial", name.to_string_lossy()));
        #[cfg(debug_assertions)]
        let pause = std::env::var(PAUSE_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis);
        #[cfg(not(debug_assertions))]
        let pause = None;
        Ok(Self {
            final_dir: dest.to_path_buf(),
            partial,
            parent: parent.to_path_buf(),
            pause,
        })
    }

    fn pause(&self) {
        if let Some(pause) = self.pause {
            std::thread::sleep(pause);
        }
    }

    fn write(self, store: &Store) -> Result<BackupReport, StoreError> {
        self.start_partial()?;
        let held = HeldSegments::hold(store.dir())?;
        let copy = store.copy_to(&self.partial.join(DATA_FILE))?;
        let mut files = 1;
        let mut bytes = std::fs::metadata(self.partial.join(DATA_FILE))?.len();
        self.pause();
        for &id in &copy.segments {
            bytes += held.copy(id, &self.partial).map_err(|e| {
                StoreError::Log(format!("copying log segment {id}: {e}; try again"))
            })?;
            files += 1;
            self.pause();
        }
        let newest = copy.segments.last().map_or(1, |id| id + 1);
        write_empty_segment(&self.partial, newest)?;
        files += 1;
        let (server_files, server_bytes) = copy_server_files(store.dir(), &self.partial)?;
        files += server_files;
        bytes += server_bytes;
        self.pause();
        self.finish()?;
        Ok(BackupReport {
            directory: self.final_dir.display().to_string(),
            files,
            bytes,
            applied_lsn: copy.applied_lsn,
        })
    }

    /// Makes the hidden directory, marked unfinished before anything else
    /// is in it. One left by an interrupted backup is removed first.
    fn start_partial(&self) -> io::Result<()> {
        if self.partial.join(INCOMPLETE_BACKUP_MARKER).exists() {
            std::fs::remove_dir_all(&self.partial)?;
        }
        private_dir(&self.partial)?;
        std::fs::create_dir(self.partial.join(LOG_DIR))?;
        File::create(self.partial.join(INCOMPLETE_BACKUP_MARKER))?.sync_all()?;
        sync_dir(&self.partial)?;
        sync_dir(&self.parent)
    }

    /// Everything is synced: the marker goes, then the directory takes its
    /// name.
    fn finish(&self) -> io::Result<()> {
        sync_dir(&self.partial.join(LOG_DIR))?;
        std::fs::remove_file(self.partial.join(INCOMPLETE_BACKUP_MARKER))?;
        sync_dir(&self.partial)?;
        std::fs::rename(&self.partial, &self.final_dir)?;
        sync_dir(&self.parent)
    }
}

/// Copies the JSON files of the data directory, synced: the engine's
/// topics and subscriptions ([`TOPICS_FILE`](crate::TOPICS_FILE)) and the server's own files
/// (`alarms.json`, `consumers.json`). Each is replaced whole by a rename,
/// so a copy is one version of it, and a change answered before the
/// backup began is in it (`topics.json.tmp`, a change being written, is
/// left). Returns how many and their bytes.
fn copy_server_files(from: &Path, to: &Path) -> io::Result<(u64, u64)> {
    let (mut files, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if !entry.file_type()?.is_file() || !name.to_string_lossy().ends_with(".json") {
            continue;
        }
        let dest = to.join(&name);
        match std::fs::copy(entry.path(), &dest) {
            Ok(n) => bytes += n,
            // Deleted between the listing and the copy.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        }
        File::open(&dest)?.sync_all()?;
        files += 1;
    }
    Ok((files, bytes))
}

/// Makes `dir` readable by the server's user only: a backup holds every
/// message and the receipt handles' key.
fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
