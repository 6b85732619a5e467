//! File work: durable creation, recovery, rotation, reading segments and
//! the restore log.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::error::ArchiveError;
use crate::layout::{self, Entry, Segment};
use crate::record::{ArchivedMessage, RestoreRecord};

/// The error for an I/O failure on `path`.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Makes a directory's entries (files created, renamed or removed in it)
/// durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), ArchiveError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// Creates `dir` (whose parent exists) if missing, durably: a segment in a
/// directory whose own entry was lost would be lost with it.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), ArchiveError> {
    match fs::create_dir(dir) {
        Ok(()) => match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
            _ => sync_dir(Path::new(".")),
        },
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(io_at(dir)(e)),
    }
}

/// The classified files of a directory; none when it does not exist.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<Entry>, ArchiveError> {
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_at(dir)(e)),
    };
    let mut entries = Vec::new();
    for item in read {
        let item = item.map_err(io_at(dir))?;
        if let Some(entry) = item.file_name().to_str().and_then(layout::classify) {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// Removes a file; already gone is as good (another node may clean up too).
pub(crate) fn remove_if_present(path: &Path) -> Result<bool, ArchiveError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_at(path)(e)),
    }
}

/// Bytes of the open segment at `path` that hold whole records: up to the
/// first line that is unterminated or does not parse. Whatever follows was
/// written by an append that never returned Ok (one that did was fsynced
/// before any later write), so it was never acknowledged.
pub(crate) fn valid_prefix(path: &Path) -> Result<(u64, u64), ArchiveError> {
    let file = File::open(path).map_err(io_at(path))?;
    let total = file.metadata().map_err(io_at(path))?.len();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut valid = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io_at(path))?;
        let whole = line.split_last().is_some_and(|(last, record)| {
            *last == b'\n' && serde_json::from_slice::<ArchivedMessage>(record).is_ok()
        });
        if n == 0 || !whole {
            return Ok((valid, total));
        }
        valid += n as u64;
    }
}

/// Cuts an open segment back to its whole records; true if it was cut.
pub(crate) fn truncate_torn(path: &Path) -> Result<bool, ArchiveError> {
    let (valid, total) = valid_prefix(path)?;
    if valid == total {
        return Ok(false);
    }
    tracing::warn!(
        path = %path.display(),
        dropped_bytes = total - valid,
        "archive: cutting a segment's unacknowledged tail"
    );
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_at(path))?;
    file.set_len(valid).map_err(io_at(path))?;
    file.sync_data().map_err(io_at(path))?;
    Ok(true)
}

/// Rotates the open segment `stem` of `queue_dir`: its whole records
/// compressed into `X.jsonl.gz.tmp`, fsynced, renamed to `X.jsonl.gz`, the
/// directory fsynced, then `X.jsonl` removed. A crash at any point leaves
/// either the plain file alone (rotation redone later) or a whole gzip
/// (recovery removes the plain file). The caller must have stopped
/// appending to it.
pub(crate) fn rotate(queue_dir: &Path, stem: &str) -> Result<(), ArchiveError> {
    let plain = layout::open_path(queue_dir, stem);
    let gz = layout::gz_path(queue_dir, stem);
    if gz.exists() {
        // An earlier rotation got as far as the rename.
        remove_if_present(&plain)?;
        return Ok(());
    }
    let valid = match valid_prefix(&plain) {
        Ok((valid, _)) => valid,
        Err(ArchiveError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if valid == 0 {
        remove_if_present(&plain)?;
        return sync_dir(queue_dir);
    }
    let tmp = layout::tmp_path(queue_dir, stem);
    if let Err(e) = compress(&plain, &tmp, valid) {
        // Best effort: recovery removes it too.
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, &gz).map_err(io_at(&gz))?;
    sync_dir(queue_dir)?;
    remove_if_present(&plain)?;
    Ok(())
}

/// Writes the first `len` bytes of `src` gzipped to `dst`, fsynced.
fn compress(src: &Path, dst: &Path, len: u64) -> Result<(), ArchiveError> {
    let input = File::open(src).map_err(io_at(src))?;
    let output = File::create(dst).map_err(io_at(dst))?;
    let mut encoder = GzEncoder::new(BufWriter::new(output), Compression::default());
    io::copy(&mut input.take(len), &mut encoder).map_err(io_at(dst))?;
    let output = encoder
        .finish()
        .map_err(io_at(dst))?
        .into_inner()
        .map_err(|e| io_at(dst)(e.into_error()))?;
    output.sync_all().map_err(io_at(dst))
}

/// Reads a segment from line `from` (counting from 0), giving `visit` each
/// record and its line until it breaks; returns whether it did.
///
/// The last line of an open segment is skipped when unterminated or
/// unparseable (its writer, maybe another node, may be mid-write); any
/// other bad line is [`ArchiveError::Corrupt`].
pub(crate) fn scan(
    queue_dir: &Path,
    segment: &Segment,
    from: usize,
    visit: &mut dyn FnMut(usize, ArchivedMessage) -> ControlFlow<()>,
) -> Result<ControlFlow<()>, ArchiveError> {
    let Some(Opened {
        path,
        mut reader,
        rotated,
    }) = open_segment(queue_dir, segment)?
    else {
        return Ok(ControlFlow::Continue(()));
    };
    let mut line = Vec::new();
    let mut index = 0usize;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io_at(&path))?;
        if n == 0 {
            return Ok(ControlFlow::Continue(()));
        }
        if index >= from {
            let corrupt = || ArchiveError::Corrupt {
                file: path.clone(),
                line: index + 1,
            };
            let Some(record) = line.strip_suffix(b"\n") else {
                // Unterminated: the file's last bytes.
                return if rotated {
                    Err(corrupt())
                } else {
                    Ok(ControlFlow::Continue(()))
                };
            };
            match serde_json::from_slice::<ArchivedMessage>(record) {
                Ok(message) => {
                    if visit(index, message).is_break() {
                        return Ok(ControlFlow::Break(()));
                    }
                }
                Err(_) => {
                    let last = reader.fill_buf().map_err(io_at(&path))?.is_empty();
                    if rotated || !last {
                        return Err(corrupt());
                    }
                }
            }
        }
        index += 1;
    }
}

/// A segment open for reading.
struct Opened {
    /// The file read (the gzip if the segment was rotated meanwhile).
    path: PathBuf,
    reader: Box<dyn BufRead>,
    rotated: bool,
}

/// Opens a segment for reading, following it to its gzip if it was
/// rotated since it was listed; `None` if it is gone (expired meanwhile).
fn open_segment(queue_dir: &Path, segment: &Segment) -> Result<Option<Opened>, ArchiveError> {
    let mut rotated = segment.rotated;
    let mut path = segment.path(queue_dir);
    let file = loop {
        match File::open(&path) {
            Ok(file) => break file,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !rotated => {
                rotated = true;
                path = layout::gz_path(queue_dir, &segment.stem);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_at(&path)(e)),
        }
    };
    let reader: Box<dyn BufRead> = if rotated {
        Box::new(BufReader::new(MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    Ok(Some(Opened {
        path,
        reader,
        rotated,
    }))
}

/// When each message of a queue was last restored, from its restore log.
pub(crate) fn read_restored(queue_dir: &Path) -> Result<HashMap<String, u64>, ArchiveError> {
    let path = queue_dir.join(layout::RESTORED_FILE);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(io_at(&path)(e)),
    };
    let mut restored = HashMap::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(io_at(&path))?;
        // Nodes append to the log concurrently and a crash may tear a line:
        // a lost restore mark costs only the mark, so bad lines are skipped.
        match serde_json::from_slice::<RestoreRecord>(&line) {
            Ok(r) => {
                let at = restored.entry(r.message_id).or_insert(r.restored_at);
                *at = (*at).max(r.restored_at);
            }
            Err(_) => {
                tracing::debug!(path = %path.display(), "archive: skipping a bad restore line")
            }
        }
    }
    Ok(restored)
}

/// Appends restore records to a queue's restore log, durably.
pub(crate) fn append_restored(
    queue_dir: &Path,
    records: &[RestoreRecord],
) -> Result<(), ArchiveError> {
    let path = queue_dir.join(layout::RESTORED_FILE);
    let created = !path.exists();
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)
        .map_err(io_at(&path))?;
    let mut buf = Vec::new();
    let len = file.metadata().map_err(io_at(&path))?.len();
    if len > 0 {
        // A torn last line would swallow the first of ours: start a new one.
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1)).map_err(io_at(&path))?;
        file.read_exact(&mut last).map_err(io_at(&path))?;
        if last[0] != b'\n' {
            buf.push(b'\n');
        }
    }
    for record in records {
        serde_json::to_writer(&mut buf, record).map_err(ArchiveError::Encode)?;
        buf.push(b'\n');
    }
    file.write_all(&buf).map_err(io_at(&path))?;
    file.sync_data().map_err(io_at(&path))?;
    if created {
        sync_dir(queue_dir)?;
    }
    Ok(())
}
