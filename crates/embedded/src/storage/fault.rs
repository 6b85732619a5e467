//! A file system in memory that injects faults, for tests: the Nth write
//! or sync fails, writes past a byte budget find the disk full, and a
//! crash keeps only what was synced.
//!
//! Each file keeps what a reader sees apart from what survives a crash:
//! writes and length changes wait in a list until the file is synced. A
//! failed sync drops that list, as Linux does (the pages are marked clean,
//! a later sync reports success without writing them): what the failed
//! sync covered is visible but never durable. Names are the same: a
//! create, rename or remove survives a crash only once its directory is
//! synced. Directories themselves are durable once created.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::directory::{Storage, parent};
use super::file::StorageFile;
use super::redb_backend::DatabaseBackend;

/// The fault-injecting file system (see the module's doc). Clones share
/// the same files and controls.
#[derive(Debug, Clone, Default)]
pub struct FaultStorage {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    files: HashMap<u64, Inode>,
    next_inode: u64,
    /// What a reader sees.
    names: BTreeMap<PathBuf, u64>,
    /// What survives a crash.
    synced_names: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    writes: u64,
    syncs: u64,
    /// The write (counted from the first) that fails, once.
    fail_write: Option<u64>,
    /// The sync that fails, once.
    fail_sync: Option<u64>,
    /// The next write to a file whose name ends so fails, once.
    fail_write_of: Option<String>,
    /// The next sync of a file whose name ends so fails, once.
    fail_sync_of: Option<String>,
    /// Most bytes all files may hold: past it, writes fail with ENOSPC.
    space: Option<u64>,
    /// The sync at which the machine dies: it and everything after fail.
    crash_at_sync: Option<u64>,
    crashed: bool,
}

#[derive(Debug, Default, Clone)]
struct Inode {
    data: Vec<u8>,
    synced: Vec<u8>,
    /// Changes made since the last sync, in order.
    pending: Vec<Change>,
    /// Writes (length changes included) and syncs of this file so far.
    writes: u64,
    syncs: u64,
}

#[derive(Debug, Clone)]
enum Change {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

fn write_into(bytes: &mut Vec<u8>, offset: u64, buf: &[u8]) {
    let end = offset as usize + buf.len();
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[offset as usize..end].copy_from_slice(buf);
}

fn apply(bytes: &mut Vec<u8>, change: &Change) {
    match change {
        Change::Write(offset, buf) => write_into(bytes, *offset, buf),
        Change::SetLen(len) => bytes.resize(*len as usize, 0),
    }
}

fn injected() -> io::Error {
    io::Error::other("injected I/O error")
}

fn gone() -> io::Error {
    io::Error::other("injected crash: the storage is gone")
}

fn full() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "no space left on device (injected)",
    )
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

impl State {
    fn alive(&self) -> io::Result<()> {
        if self.crashed { Err(gone()) } else { Ok(()) }
    }

    fn used(&self) -> u64 {
        self.files.values().map(|f| f.data.len() as u64).sum()
    }

    /// Whether file `inode` is named with `suffix`.
    fn named(&self, inode: u64, suffix: &Option<String>) -> bool {
        suffix.as_ref().is_some_and(|suffix| {
            self.names
                .iter()
                .any(|(p, &id)| id == inode && p.to_string_lossy().ends_with(suffix.as_str()))
        })
    }

    /// Counts a sync of file `inode` (`None`: a directory) and decides
    /// whether it fails.
    fn sync(&mut self, inode: Option<u64>) -> io::Result<()> {
        self.alive()?;
        self.syncs += 1;
        if let Some(inode) = inode
            && self.named(inode, &self.fail_sync_of)
        {
            self.fail_sync_of = None;
            return Err(injected());
        }
        if self.crash_at_sync == Some(self.syncs) {
            self.crashed = true;
            return Err(gone());
        }
        if self.fail_sync == Some(self.syncs) {
            self.fail_sync = None;
            return Err(injected());
        }
        Ok(())
    }

    fn inode(&mut self, inode: u64) -> io::Result<&mut Inode> {
        self.files
            .get_mut(&inode)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the file was deleted"))
    }

    /// Drops files no name, durable or not, refers to any more.
    fn collect(&mut self) {
        let named: BTreeSet<u64> = self
            .names
            .values()
            .chain(self.synced_names.values())
            .copied()
            .collect();
        self.files.retain(|id, _| named.contains(id));
    }
}

impl FaultStorage {
    /// An empty file system with no fault set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `n`th write from now (1: the next) fails with an I/O error.
    pub fn fail_write(&self, n: u64) {
        let mut s = self.state.lock();
        s.fail_write = Some(s.writes + n);
    }

    /// The `n`th sync from now (1: the next) fails with an I/O error, and
    /// what it was to make durable never becomes durable.
    pub fn fail_sync(&self, n: u64) {
        let mut s = self.state.lock();
        s.fail_sync = Some(s.syncs + n);
    }

    /// The next write to a file whose name ends with `suffix` fails.
    pub fn fail_write_of(&self, suffix: &str) {
        self.state.lock().fail_write_of = Some(suffix.to_string());
    }

    /// The next sync of a file whose name ends with `suffix` fails, and
    /// what it was to make durable never becomes durable.
    pub fn fail_sync_of(&self, suffix: &str) {
        self.state.lock().fail_sync_of = Some(suffix.to_string());
    }

    /// Limits the bytes all files hold together (`None`: no limit); a
    /// write past it writes what fits and fails with ENOSPC.
    pub fn set_space(&self, bytes: Option<u64>) {
        self.state.lock().space = bytes;
    }

    /// Bytes all files hold together now.
    pub fn used(&self) -> u64 {
        self.state.lock().used()
    }

    /// The machine dies at the `n`th sync from now: that sync and every
    /// later operation fail, and nothing more becomes durable.
    pub fn crash_at_sync(&self, n: u64) {
        let mut s = self.state.lock();
        s.crash_at_sync = Some(s.syncs + n);
    }

    /// Whether the machine died (see [`FaultStorage::crash_at_sync`]).
    pub fn crashed(&self) -> bool {
        self.state.lock().crashed
    }

    /// Writes and syncs so far.
    pub fn counts(&self) -> (u64, u64) {
        let s = self.state.lock();
        (s.writes, s.syncs)
    }

    /// Writes (length changes included) and syncs so far of the files
    /// whose names end with `suffix`, as long as each has kept its name.
    pub fn counts_of(&self, suffix: &str) -> (u64, u64) {
        let s = self.state.lock();
        s.names
            .iter()
            .filter(|(p, _)| p.to_string_lossy().ends_with(suffix))
            .filter_map(|(_, id)| s.files.get(id))
            .fold((0, 0), |(w, y), f| (w + f.writes, y + f.syncs))
    }

    /// What a restart after a crash now finds: the synced names and bytes
    /// only, with no fault set. This storage is left as it is.
    pub fn after_crash(&self) -> FaultStorage {
        let s = self.state.lock();
        let mut files = HashMap::new();
        for &id in s.synced_names.values() {
            if let Some(f) = s.files.get(&id) {
                files.insert(
                    id,
                    Inode {
                        data: f.synced.clone(),
                        synced: f.synced.clone(),
                        ..Inode::default()
                    },
                );
            }
        }
        let state = State {
            files,
            next_inode: s.next_inode,
            names: s.synced_names.clone(),
            synced_names: s.synced_names.clone(),
            dirs: s.dirs.clone(),
            ..State::default()
        };
        FaultStorage {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn file(&self, inode: u64) -> Arc<dyn StorageFile> {
        Arc::new(FaultFile {
            state: self.state.clone(),
            inode,
        })
    }
}

impl Storage for FaultStorage {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.alive()?;
        for d in dir.ancestors() {
            s.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn StorageFile>> {
        let mut s = self.state.lock();
        s.alive()?;
        if !s.dirs.contains(parent(path)) {
            return Err(not_found(parent(path)));
        }
        if let Some(&id) = s.names.get(path) {
            // Emptied in place, as `O_TRUNC` does.
            let f = s.inode(id)?;
            f.data.clear();
            f.pending.push(Change::SetLen(0));
            return Ok(self.file(id));
        }
        let id = s.next_inode;
        s.next_inode += 1;
        s.files.insert(id, Inode::default());
        s.names.insert(path.to_path_buf(), id);
        drop(s);
        Ok(self.file(id))
    }

    fn open(&self, path: &Path, _write: bool) -> io::Result<Arc<dyn StorageFile>> {
        let s = self.state.lock();
        let id = *s.names.get(path).ok_or_else(|| not_found(path))?;
        drop(s);
        Ok(self.file(id))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.alive()?;
        let id = s.names.remove(from).ok_or_else(|| not_found(from))?;
        s.names.insert(to.to_path_buf(), id);
        s.collect();
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.alive()?;
        s.names.remove(path).ok_or_else(|| not_found(path))?;
        s.collect();
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.state.lock();
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(s.names
            .keys()
            .filter(|p| parent(p) == dir)
            .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
            .collect())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.sync(None)?;
        let State {
            names,
            synced_names,
            ..
        } = &mut *s;
        synced_names.retain(|p, _| parent(p) != dir);
        for (p, &id) in names.iter() {
            if parent(p) == dir {
                synced_names.insert(p.clone(), id);
            }
        }
        s.collect();
        Ok(())
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let s = self.state.lock();
        Ok(s.names.contains_key(path) || s.dirs.contains(path))
    }

    fn len(&self, path: &Path) -> io::Result<u64> {
        let s = self.state.lock();
        let id = s.names.get(path).ok_or_else(|| not_found(path))?;
        Ok(s.files.get(id).map_or(0, |f| f.data.len() as u64))
    }

    fn database(&self, path: &Path) -> io::Result<Option<DatabaseBackend>> {
        let file = match self.open(path, true) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create(path)?,
            Err(e) => return Err(e),
        };
        Ok(Some(DatabaseBackend(file)))
    }
}

/// An open file of [`FaultStorage`].
#[derive(Debug)]
struct FaultFile {
    state: Arc<Mutex<State>>,
    inode: u64,
}

impl StorageFile for FaultFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut s = self.state.lock();
        s.alive()?;
        s.writes += 1;
        if s.fail_write == Some(s.writes) {
            s.fail_write = None;
            return Err(injected());
        }
        if s.named(self.inode, &s.fail_write_of) {
            s.fail_write_of = None;
            return Err(injected());
        }
        let (used, space) = (s.used(), s.space);
        let f = s.inode(self.inode)?;
        let growth = (offset + buf.len() as u64).saturating_sub(f.data.len() as u64);
        let fits = match space {
            // Overwriting needs no space, even past the budget.
            Some(space) if growth > 0 && used + growth > space => {
                let room = space.saturating_sub(used) + (buf.len() as u64 - growth);
                Some(room.min(buf.len() as u64) as usize)
            }
            _ => None,
        };
        f.writes += 1;
        let buf = &buf[..fits.unwrap_or(buf.len())];
        write_into(&mut f.data, offset, buf);
        f.pending.push(Change::Write(offset, buf.to_vec()));
        match fits {
            Some(_) => Err(full()),
            None => Ok(()),
        }
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut s = self.state.lock();
        let f = s.inode(self.inode)?;
        let end = offset as usize + buf.len();
        if end > f.data.len() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.copy_from_slice(&f.data[offset as usize..end]);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut s = self.state.lock();
        let synced = s.sync(Some(self.inode));
        let f = s.inode(self.inode)?;
        f.syncs += 1;
        let pending = std::mem::take(&mut f.pending);
        // A failed sync drops what it was to write (see the module's doc).
        synced?;
        for change in &pending {
            apply(&mut f.synced, change);
        }
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut s = self.state.lock();
        s.alive()?;
        let (used, space) = (s.used(), s.space);
        let f = s.inode(self.inode)?;
        f.writes += 1;
        let growth = len.saturating_sub(f.data.len() as u64);
        if growth > 0 && space.is_some_and(|space| used + growth > space) {
            return Err(full());
        }
        f.data.resize(len as usize, 0);
        f.pending.push(Change::SetLen(len));
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let mut s = self.state.lock();
        Ok(s.inode(self.inode)?.data.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage() -> FaultStorage {
        let s = FaultStorage::new();
        s.create_dir_all(Path::new("/d")).unwrap();
        s
    }

    /// A crash keeps synced bytes and drops the rest; a file whose
    /// directory was never synced is gone.
    #[test]
    fn a_crash_keeps_only_what_was_synced() {
        let s = storage();
        let f = s.create(Path::new("/d/a")).unwrap();
        f.write_all_at(b"kept", 0).unwrap();
        f.sync_data().unwrap();
        f.write_all_at(b"lost", 4).unwrap();
        assert_eq!(f.read_all().unwrap(), b"keptlost");
        assert!(!s.after_crash().exists(Path::new("/d/a")).unwrap());
        s.sync_dir(Path::new("/d")).unwrap();
        let after = s.after_crash();
        let f = after.open(Path::new("/d/a"), false).unwrap();
        assert_eq!(f.read_all().unwrap(), b"kept");
    }

    /// A failed sync reports its error once; what it covered is visible
    /// but never becomes durable, even after a later sync succeeds.
    #[test]
    fn a_failed_sync_never_makes_its_writes_durable() {
        let s = storage();
        let f = s.create(Path::new("/d/a")).unwrap();
        s.sync_dir(Path::new("/d")).unwrap();
        f.write_all_at(b"one", 0).unwrap();
        s.fail_sync(1);
        assert!(f.sync_data().is_err());
        f.write_all_at(b"two", 3).unwrap();
        f.sync_data().unwrap();
        assert_eq!(f.read_all().unwrap(), b"onetwo");
        let after = s.after_crash().open(Path::new("/d/a"), false).unwrap();
        assert_eq!(after.read_all().unwrap(), b"\0\0\0two");
    }

    /// Past the budget a write writes what fits and fails with ENOSPC;
    /// overwriting bytes already there needs no space.
    #[test]
    fn a_full_disk_fails_growing_writes_only() {
        let s = storage();
        let f = s.create(Path::new("/d/a")).unwrap();
        s.set_space(Some(6));
        f.write_all_at(b"1234", 0).unwrap();
        let e = f.write_all_at(b"5678", 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert_eq!(f.read_all().unwrap(), b"123456");
        f.write_all_at(b"ab", 0).unwrap();
        s.set_space(None);
        f.write_all_at(b"78", 6).unwrap();
    }

    /// The Nth write fails once; a crash at a sync fails it and
    /// everything after.
    #[test]
    fn the_nth_write_fails_and_a_crash_stops_everything() {
        let s = storage();
        let f = s.create(Path::new("/d/a")).unwrap();
        s.fail_write(2);
        f.write_all_at(b"a", 0).unwrap();
        assert!(f.write_all_at(b"b", 1).is_err());
        f.write_all_at(b"c", 1).unwrap();
        s.crash_at_sync(1);
        assert!(f.sync_data().is_err());
        assert!(s.crashed());
        assert!(f.write_all_at(b"d", 2).is_err());
        assert!(s.create(Path::new("/d/b")).is_err());
    }
}
