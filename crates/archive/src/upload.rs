//! What is left to copy to a bucket: this node's rotated segments without
//! an `X.jsonl.gz.uploaded` marker. The copying itself (HTTP) is the
//! caller's; it marks each segment once the bucket holds it.
//!
//! Object names repeat the directory's layout, `<queue-dir>/<stem>.jsonl.gz`,
//! so a bucket synced down (`aws s3 sync s3://bucket/prefix/ DIR`) is an
//! archive directory sluice reads. A marker lost to a crash only makes the
//! next pass copy the segment again, to the same name with the same bytes.

use std::fs;

use crate::Archive;
use crate::error::ArchiveError;
use crate::layout::{self, Entry, PendingUpload};
use crate::segment::{self, io_at};

impl Archive {
    /// This node's rotated segments not yet copied to the bucket, oldest
    /// first. Other nodes' segments are theirs to copy.
    pub fn pending_uploads(&self) -> Result<Vec<PendingUpload>, ArchiveError> {
        let mut pending = Vec::new();
        for (queue, queue_dir) in self.queue_dirs()? {
            let entries = segment::list_dir(&queue_dir)?;
            let uploaded: Vec<&str> = entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Uploaded(stem) => Some(stem.as_str()),
                    _ => None,
                })
                .collect();
            for entry in &entries {
                let Entry::Rotated(stem) = entry else {
                    continue;
                };
                let mine = layout::parse_stem(stem).is_some_and(|(_, node)| node == self.node);
                if !mine || uploaded.contains(&stem.as_str()) {
                    continue;
                }
                pending.push(PendingUpload::new(&queue, &queue_dir, stem));
            }
        }
        pending.sort_by(|a, b| a.object.cmp(&b.object));
        Ok(pending)
    }

    /// Notes that the bucket holds `upload`'s segment. Not synced: a lost
    /// marker costs one more copy, not a message.
    pub fn mark_uploaded(&self, upload: &PendingUpload) -> Result<(), ArchiveError> {
        // Held so that expiry, which removes markers with their segments,
        // does not race this one's creation.
        let _writers = self.current.lock();
        if !upload.path.exists() {
            // Expired while it was being copied: no marker for nothing.
            return Ok(());
        }
        fs::write(&upload.marker, b"").map_err(io_at(&upload.marker))
    }
}
