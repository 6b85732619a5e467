//! Whether the storage takes writes: a probe file written and synced, then
//! removed. The reopen after a failed write tries it before anything else
//! (rule D5), and a start that failed asks it whether the disk is full
//! (rule D6).

use std::io;
use std::path::Path;

use super::directory::Storage;

/// What a probe writes and syncs: about what the first record after a
/// start writes (its log segment's zeros).
const PROBE_BYTES: usize = 1 << 20;

/// The probe file, in the data directory.
const PROBE_FILE: &str = "sluice.probe";

/// Writes and syncs [`PROBE_BYTES`] to a file in `dir`, then deletes it.
pub fn probe(storage: &dyn Storage, dir: &Path) -> io::Result<()> {
    let path = dir.join(PROBE_FILE);
    let file = storage.create(&path)?;
    let written = file
        .write_all_at(&vec![0; PROBE_BYTES], 0)
        .and_then(|()| file.sync_data());
    drop(file);
    let removed = storage.remove(&path);
    written.and(removed)
}
