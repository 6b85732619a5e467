//! A file system over another that keeps every change in memory and
//! writes nothing to the one below: what a start on a full disk replays
//! the log into, so that it can serve what the log holds without the room
//! to write it to the store (rule D6).
//!
//! A file is copied on write, a page at a time, and only where the bytes
//! change: rewriting bytes as they are (as the replay does with the log's
//! newest records) costs no memory. Names created, renamed or removed
//! here hide the ones below. Syncs do nothing: nothing here is ever
//! durable, and nothing read from it is acknowledged as such.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::directory::{Storage, parent};
use super::file::StorageFile;
use super::redb_backend::DatabaseBackend;

/// The unit a file is copied in.
const PAGE: u64 = 4096;

/// The file system over `base` that keeps its changes in memory (see the
/// module's doc).
#[derive(Debug)]
pub struct Overlay {
    base: Arc<dyn Storage>,
    names: Mutex<Names>,
}

#[derive(Debug, Default)]
struct Names {
    /// Files created, or opened for writing, here: what their paths name.
    files: BTreeMap<PathBuf, Arc<CowFile>>,
    /// Paths of the base removed or renamed away here.
    gone: BTreeSet<PathBuf>,
    /// Directories created here.
    dirs: BTreeSet<PathBuf>,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

impl Overlay {
    /// An overlay over `base`, holding no change yet.
    pub fn new(base: Arc<dyn Storage>) -> Self {
        Self {
            base,
            names: Mutex::new(Names::default()),
        }
    }

    /// The file at `path` as this overlay shows it, taken in for changes
    /// when it is the base's.
    fn open_cow(&self, names: &mut Names, path: &Path) -> io::Result<Arc<CowFile>> {
        if let Some(file) = names.files.get(path) {
            return Ok(file.clone());
        }
        if names.gone.contains(path) {
            return Err(not_found(path));
        }
        let file = Arc::new(CowFile::over(self.base.open(path, false)?)?);
        names.files.insert(path.to_path_buf(), file.clone());
        Ok(file)
    }
}

impl Storage for Overlay {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut names = self.names.lock();
        names.dirs.extend(dir.ancestors().map(Path::to_path_buf));
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn StorageFile>> {
        let file = Arc::new(CowFile::empty());
        let mut names = self.names.lock();
        names.gone.remove(path);
        names.files.insert(path.to_path_buf(), file.clone());
        Ok(file)
    }

    fn open(&self, path: &Path, write: bool) -> io::Result<Arc<dyn StorageFile>> {
        let mut names = self.names.lock();
        if write || names.files.contains_key(path) {
            return Ok(self.open_cow(&mut names, path)?);
        }
        if names.gone.contains(path) {
            return Err(not_found(path));
        }
        drop(names);
        // Unchanged here: the base's own file, so that readers of many
        // segments keep no more files open than they would without this.
        self.base.open(path, false)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut names = self.names.lock();
        let file = self.open_cow(&mut names, from)?;
        names.files.remove(from);
        names.gone.insert(from.to_path_buf());
        names.gone.remove(to);
        names.files.insert(to.to_path_buf(), file);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut names = self.names.lock();
        let here = names.files.remove(path).is_some();
        let below = !names.gone.contains(path) && self.base.exists(path)?;
        if !here && !below {
            return Err(not_found(path));
        }
        names.gone.insert(path.to_path_buf());
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let names = self.names.lock();
        let mut listed: BTreeSet<String> = match self.base.list(dir) {
            Ok(listed) => listed.into_iter().collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound && names.dirs.contains(dir) => {
                BTreeSet::new()
            }
            Err(e) => return Err(e),
        };
        listed.retain(|name| !names.gone.contains(&dir.join(name)));
        for path in names.files.keys().filter(|p| parent(p) == dir) {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                listed.insert(name.to_string());
            }
        }
        Ok(listed.into_iter().collect())
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let names = self.names.lock();
        if names.files.contains_key(path) || names.dirs.contains(path) {
            return Ok(true);
        }
        if names.gone.contains(path) {
            return Ok(false);
        }
        self.base.exists(path)
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        let file = self.names.lock().files.get(path).cloned();
        match file {
            Some(file) => file.len(),
            None if self.names.lock().gone.contains(path) => Err(not_found(path)),
            None => self.base.len(path),
        }
    }

    fn database(&self, path: &Path) -> io::Result<Option<DatabaseBackend>> {
        let file: Arc<dyn StorageFile> = match self.open(path, true) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create(path)?,
            Err(e) => return Err(e),
        };
        Ok(Some(DatabaseBackend(file)))
    }
}

/// A file of the base (or none) with the pages changed since kept in
/// memory.
#[derive(Debug)]
struct CowFile {
    base: Option<Arc<dyn StorageFile>>,
    state: Mutex<Cow>,
}

#[derive(Debug, Default)]
struct Cow {
    len: u64,
    /// How much of the base still shows: a cut hides the rest for good,
    /// and growing again brings zeros, not the base's old bytes.
    base_len: u64,
    /// The pages changed, by index: whole pages, zeros past `len`.
    pages: HashMap<u64, Box<[u8]>>,
}

impl CowFile {
    fn empty() -> Self {
        Self {
            base: None,
            state: Mutex::new(Cow::default()),
        }
    }

    fn over(base: Arc<dyn StorageFile>) -> io::Result<Self> {
        let len = base.len()?;
        Ok(Self {
            base: Some(base),
            state: Mutex::new(Cow {
                len,
                base_len: len,
                pages: HashMap::new(),
            }),
        })
    }

    /// Fills `out` from the bytes at `offset` that no changed page covers:
    /// the base's up to `base_len`, zeros after.
    fn read_below(&self, cow: &Cow, out: &mut [u8], offset: u64) -> io::Result<()> {
        let from_base = cow.base_len.saturating_sub(offset).min(out.len() as u64) as usize;
        if let (Some(base), true) = (&self.base, from_base > 0) {
            base.read_exact_at(&mut out[..from_base], offset)?;
        }
        out[from_base..].fill(0);
        Ok(())
    }
}

impl StorageFile for CowFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut cow = self.state.lock();
        let end = offset + buf.len() as u64;
        let mut at = offset;
        while at < end {
            let index = at / PAGE;
            let start = index * PAGE;
            let within = (at - start) as usize;
            let n = ((end - at) as usize).min(PAGE as usize - within);
            let part = &buf[(at - offset) as usize..][..n];
            if let Some(page) = cow.pages.get_mut(&index) {
                page[within..within + n].copy_from_slice(part);
            } else {
                let mut page = vec![0; PAGE as usize].into_boxed_slice();
                let shown = cow.len.saturating_sub(start).min(PAGE) as usize;
                self.read_below(&cow, &mut page[..shown], start)?;
                // Bytes written as they are need no copy.
                if page[within..within + n] != *part {
                    page[within..within + n].copy_from_slice(part);
                    cow.pages.insert(index, page);
                }
            }
            at += n as u64;
        }
        cow.len = cow.len.max(end);
        Ok(())
    }

    fn read_exact_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let cow = self.state.lock();
        let end = offset + out.len() as u64;
        if end > cow.len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let mut at = offset;
        while at < end {
            let index = at / PAGE;
            let within = (at - index * PAGE) as usize;
            let dest = &mut out[(at - offset) as usize..];
            if let Some(page) = cow.pages.get(&index) {
                let n = dest.len().min(PAGE as usize - within);
                dest[..n].copy_from_slice(&page[within..within + n]);
                at += n as u64;
                continue;
            }
            // One read for the whole run of pages not changed here.
            let mut run_end = (index + 1) * PAGE;
            while run_end < end && !cow.pages.contains_key(&(run_end / PAGE)) {
                run_end += PAGE;
            }
            let n = (run_end.min(end) - at) as usize;
            self.read_below(&cow, &mut dest[..n], at)?;
            at += n as u64;
        }
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut cow = self.state.lock();
        if len < cow.len {
            cow.base_len = cow.base_len.min(len);
            cow.pages.retain(|&index, _| index * PAGE < len);
            let within = (len % PAGE) as usize;
            if let Some(page) = cow.pages.get_mut(&(len / PAGE)) {
                page[within..].fill(0);
            }
        }
        cow.len = len;
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::FaultStorage;

    fn base_with(path: &str, bytes: &[u8]) -> FaultStorage {
        let base = FaultStorage::new();
        base.create_dir_all(Path::new("/d")).unwrap();
        let f = base.create(Path::new(path)).unwrap();
        f.write_all_at(bytes, 0).unwrap();
        base
    }

    /// Writes, cuts and growth show through the overlay as on a file
    /// system, across pages, while the base keeps its bytes; bytes
    /// rewritten as they are take no page.
    #[test]
    fn changes_stay_in_memory_and_read_back_as_written() {
        let original: Vec<u8> = (0..3 * PAGE).map(|i| (i % 251) as u8).collect();
        let base = base_with("/d/a", &original);
        let overlay = Overlay::new(Arc::new(base.clone()));
        let f = overlay.open(Path::new("/d/a"), true).unwrap();
        f.write_all_at(&original[100..5000], 100).unwrap();
        f.write_all_at(b"changed", PAGE - 3).unwrap();
        let mut expected = original.clone();
        expected[PAGE as usize - 3..][..7].copy_from_slice(b"changed");
        assert_eq!(f.read_all().unwrap(), expected);
        f.set_len(PAGE + 2).unwrap();
        f.set_len(2 * PAGE).unwrap();
        expected.truncate(PAGE as usize + 2);
        expected.resize(2 * PAGE as usize, 0);
        assert_eq!(f.read_all().unwrap(), expected);
        f.write_all_at(b"end", 4 * PAGE).unwrap();
        expected.resize(4 * PAGE as usize, 0);
        expected.extend_from_slice(b"end");
        assert_eq!(overlay.len(Path::new("/d/a")).unwrap(), 4 * PAGE + 3);
        let again = overlay.open(Path::new("/d/a"), false).unwrap();
        assert_eq!(again.read_all().unwrap(), expected);
        let below = base.open(Path::new("/d/a"), false).unwrap();
        assert_eq!(below.read_all().unwrap(), original);
    }

    /// One operation on a file, for the model test below.
    #[derive(Debug, Clone)]
    enum FileOp {
        /// Writes `len` bytes at `offset`: a pattern from `seed`, or the
        /// bytes the file already shows there (what a replay rewrites).
        Write {
            offset: u64,
            len: usize,
            seed: u8,
            same: bool,
        },
        SetLen(u64),
        Read {
            offset: u64,
            len: usize,
        },
    }

    fn file_op() -> impl proptest::strategy::Strategy<Value = FileOp> {
        use proptest::prelude::*;
        let span = 0..5 * PAGE;
        prop_oneof![
            4 => (span.clone(), 0..2 * PAGE as usize, any::<u8>(), any::<bool>())
                .prop_map(|(offset, len, seed, same)| FileOp::Write { offset, len, seed, same }),
            1 => span.clone().prop_map(FileOp::SetLen),
            3 => (span, 0..2 * PAGE as usize).prop_map(|(offset, len)| FileOp::Read { offset, len }),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// A file over the base reads back, after any sequence of writes,
        /// cuts and growth, what a plain byte vector given the same
        /// operations holds (zeros where it grew), and the base's file
        /// never changes.
        #[test]
        fn a_file_reads_back_what_a_byte_vector_would(
            base_len in 0..3 * PAGE,
            ops in proptest::collection::vec(file_op(), 1..40),
        ) {
            let original: Vec<u8> = (0..base_len).map(|i| (i % 253) as u8 + 1).collect();
            let base = base_with("/d/a", &original);
            let overlay = Overlay::new(Arc::new(base.clone()));
            let file = overlay.open(Path::new("/d/a"), true).unwrap();
            let mut model = original.clone();
            for op in ops {
                match op {
                    FileOp::Write { offset, len, seed, same } => {
                        let at = offset as usize;
                        let bytes: Vec<u8> = if same {
                            (0..len).map(|i| model.get(at + i).copied().unwrap_or(0)).collect()
                        } else {
                            (0..len).map(|i| seed.wrapping_add(i as u8)).collect()
                        };
                        file.write_all_at(&bytes, offset).unwrap();
                        if model.len() < at + len {
                            model.resize(at + len, 0);
                        }
                        model[at..at + len].copy_from_slice(&bytes);
                    }
                    FileOp::SetLen(len) => {
                        file.set_len(len).unwrap();
                        model.resize(len as usize, 0);
                    }
                    FileOp::Read { offset, len } => {
                        let mut out = vec![0xee; len];
                        let read = file.read_exact_at(&mut out, offset);
                        let end = offset as usize + len;
                        if end > model.len() {
                            proptest::prop_assert!(read.is_err());
                        } else {
                            read.unwrap();
                            proptest::prop_assert_eq!(&out[..], &model[offset as usize..end]);
                        }
                    }
                }
                proptest::prop_assert_eq!(file.len().unwrap(), model.len() as u64);
            }
            proptest::prop_assert_eq!(file.read_all().unwrap(), model);
            let below = base.open(Path::new("/d/a"), false).unwrap();
            proptest::prop_assert_eq!(below.read_all().unwrap(), original);
        }
    }

    /// Names created, renamed and removed here hide the base's, which
    /// keeps its own.
    #[test]
    fn names_change_here_only() {
        let base = base_with("/d/a", b"a");
        let overlay = Overlay::new(Arc::new(base.clone()));
        overlay.create_dir_all(Path::new("/d/new")).unwrap();
        assert!(overlay.list(Path::new("/d/new")).unwrap().is_empty());
        overlay.create(Path::new("/d/b")).unwrap();
        overlay
            .rename(Path::new("/d/a"), Path::new("/d/c"))
            .unwrap();
        assert_eq!(overlay.list(Path::new("/d")).unwrap(), ["b", "c"]);
        assert!(!overlay.exists(Path::new("/d/a")).unwrap());
        let c = overlay.open(Path::new("/d/c"), false).unwrap();
        assert_eq!(c.read_all().unwrap(), b"a");
        overlay.remove(Path::new("/d/c")).unwrap();
        assert!(overlay.remove(Path::new("/d/c")).is_err());
        assert_eq!(overlay.list(Path::new("/d")).unwrap(), ["b"]);
        assert_eq!(base.list(Path::new("/d")).unwrap(), ["a"]);
        assert!(!base.exists(Path::new("/d/new")).unwrap());
    }
}
