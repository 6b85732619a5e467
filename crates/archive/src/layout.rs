//! Names on disk: queue directories, segment files, the restore log.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The suffix of a segment still being appended to.
pub(crate) const OPEN_EXT: &str = ".jsonl";
/// The suffix of a rotated (gzip) segment.
pub(crate) const GZ_EXT: &str = ".jsonl.gz";
/// The suffix of a rotation's output before its rename.
pub(crate) const TMP_EXT: &str = ".jsonl.gz.tmp";
/// The suffix of the marker saying a rotated segment is in the bucket.
pub(crate) const UPLOADED_EXT: &str = ".jsonl.gz.uploaded";
/// The restore log in each queue directory.
pub(crate) const RESTORED_FILE: &str = "restored.jsonl";

/// Digits of a segment's start time: enough for ms until the year 318857,
/// and fixed so that name order is time order.
const START_DIGITS: usize = 16;
/// The largest start that fits the digits.
const MAX_START: u64 = 9_999_999_999_999_999;
/// Longest node name kept: file names must stay well under 255 bytes.
const MAX_NODE_LEN: usize = 64;

/// The directory name of a queue key: every byte outside `[A-Za-z0-9_.-]`
/// percent-encoded, and a leading `.` too, so that no key can name `.`,
/// `..` or a hidden file.
pub(crate) fn encode_queue(queue: &str) -> String {
    let mut out = String::with_capacity(queue.len());
    for (i, b) in queue.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0);
        if plain {
            out.push(char::from(b));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The queue key of a directory name, `None` for a name `encode_queue`
/// would not have made (not ours).
pub(crate) fn decode_queue(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = name.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let key = String::from_utf8(out).ok()?;
    (!key.is_empty() && encode_queue(&key) == name).then_some(key)
}

/// A node name usable in file names: `[A-Za-z0-9_-]`, other characters
/// replaced by `_`, never empty.
pub(crate) fn sanitize_node(node: &str) -> String {
    let clean: String = node
        .chars()
        .take(MAX_NODE_LEN)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "node".to_owned()
    } else {
        clean
    }
}

/// A segment's stem: `<start, 16 digits>-<node>`.
pub(crate) fn stem(start_ms: u64, node: &str) -> String {
    format!(
        "{:0width$}-{node}",
        start_ms.min(MAX_START),
        width = START_DIGITS
    )
}

/// The start time and node of a stem, `None` if it is not one.
pub(crate) fn parse_stem(stem: &str) -> Option<(u64, &str)> {
    let (digits, node) = stem.split_at_checked(START_DIGITS)?;
    let node = node.strip_prefix('-')?;
    let valid_node = !node.is_empty()
        && node
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_node || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, node))
}

/// What a file in a queue directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// `X.jsonl`: a segment still being appended to.
    Open(String),
    /// `X.jsonl.gz`: a rotated segment.
    Rotated(String),
    /// `X.jsonl.gz.tmp`: a rotation's unfinished output.
    Tmp(String),
    /// `X.jsonl.gz.uploaded`: `X.jsonl.gz` is copied to the bucket.
    Uploaded(String),
    /// `restored.jsonl`.
    Restored,
}

/// Classifies a file name of a queue directory; `None` for anything else.
pub(crate) fn classify(name: &str) -> Option<Entry> {
    if name == RESTORED_FILE {
        return Some(Entry::Restored);
    }
    // Longest suffix first: `.jsonl.gz.tmp` also ends in `.tmp` only.
    let (stem, make): (&str, fn(String) -> Entry) = if let Some(s) = name.strip_suffix(TMP_EXT) {
        (s, Entry::Tmp)
    } else if let Some(s) = name.strip_suffix(UPLOADED_EXT) {
        (s, Entry::Uploaded)
    } else if let Some(s) = name.strip_suffix(GZ_EXT) {
        (s, Entry::Rotated)
    } else if let Some(s) = name.strip_suffix(OPEN_EXT) {
        (s, Entry::Open)
    } else {
        return None;
    };
    parse_stem(stem)?;
    Some(make(stem.to_owned()))
}

/// A segment of a queue, as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Its stem, the same before and after rotation.
    pub stem: String,
    /// Rotated (`X.jsonl.gz`); otherwise open (`X.jsonl`).
    pub rotated: bool,
}

impl Segment {
    /// The file to read in `queue_dir`.
    pub(crate) fn path(&self, queue_dir: &Path) -> PathBuf {
        if self.rotated {
            gz_path(queue_dir, &self.stem)
        } else {
            open_path(queue_dir, &self.stem)
        }
    }
}

/// `X.jsonl` in `queue_dir`.
pub(crate) fn open_path(queue_dir: &Path, stem: &str) -> PathBuf {
    queue_dir.join(format!("{stem}{OPEN_EXT}"))
}

/// `X.jsonl.gz` in `queue_dir`.
pub(crate) fn gz_path(queue_dir: &Path, stem: &str) -> PathBuf {
    queue_dir.join(format!("{stem}{GZ_EXT}"))
}

/// `X.jsonl.gz.uploaded` in `queue_dir`.
pub(crate) fn uploaded_path(queue_dir: &Path, stem: &str) -> PathBuf {
    queue_dir.join(format!("{stem}{UPLOADED_EXT}"))
}

/// `X.jsonl.gz.tmp` in `queue_dir`.
pub(crate) fn tmp_path(queue_dir: &Path, stem: &str) -> PathBuf {
    queue_dir.join(format!("{stem}{TMP_EXT}"))
}

/// The segments among a queue directory's entries, in archive order (by
/// stem). A stem present both open and rotated is the rotated one: the
/// rename happened, so the gzip is whole and the plain file is about to go.
pub(crate) fn segments(entries: impl IntoIterator<Item = Entry>) -> Vec<Segment> {
    let mut by_stem = std::collections::BTreeMap::new();
    for entry in entries {
        match entry {
            Entry::Open(stem) => {
                by_stem.entry(stem).or_insert(false);
            }
            Entry::Rotated(stem) => {
                by_stem.insert(stem, true);
            }
            Entry::Tmp(_) | Entry::Uploaded(_) | Entry::Restored => {}
        }
    }
    by_stem
        .into_iter()
        .map(|(stem, rotated)| Segment { stem, rotated })
        .collect()
}

/// A rotated segment the bucket does not hold yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingUpload {
    /// The queue key the segment belongs to.
    pub queue: String,
    /// Its object name under the bucket's prefix: `<queue-dir>/<stem>.jsonl.gz`.
    pub object: String,
    /// The gzip file to copy.
    pub path: PathBuf,
    /// The marker to create once copied.
    pub(crate) marker: PathBuf,
}

impl PendingUpload {
    /// The rotated segment `stem` of `queue`, in `queue_dir`.
    pub(crate) fn new(queue: &str, queue_dir: &Path, stem: &str) -> Self {
        PendingUpload {
            queue: queue.to_owned(),
            object: format!("{}/{stem}{GZ_EXT}", encode_queue(queue)),
            path: gz_path(queue_dir, stem),
            marker: uploaded_path(queue_dir, stem),
        }
    }
}
