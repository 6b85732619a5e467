//! The JSON files a node alone on its storage keeps the alarms' and the
//! consumers' state in, in its data directory (`alarms.json`,
//! `consumers.json`); on storage several nodes share, the engine keeps that
//! state instead ([`Coordination`](crate::Coordination)). Read whole,
//! written whole so that a crash leaves either the old contents or the
//! new.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The file's value, or `T::default()` when there is no file yet.
pub fn read<T: DeserializeOwned + Default>(path: &Path) -> std::io::Result<T> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(std::io::Error::other),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(e),
    }
}

/// Writes `value` to a temporary file beside `path`, syncs it, renames
/// it over `path` and syncs the directory, so that the new contents, not
/// only the old, survive a machine crash once this returns.
pub fn write<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    sync_dir(path)
}

/// Makes the rename into `path`'s directory durable (a no-op where a
/// directory cannot be opened as a file).
fn sync_dir(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_missing_file_reads_as_the_default_and_a_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        assert_eq!(
            read::<BTreeMap<String, u32>>(&path).unwrap(),
            BTreeMap::new()
        );
        write(&path, &BTreeMap::from([("a".to_string(), 1)])).unwrap();
        write(&path, &BTreeMap::from([("b".to_string(), 2)])).unwrap();
        let back: BTreeMap<String, u32> = read(&path).unwrap();
        assert_eq!(back, BTreeMap::from([("b".to_string(), 2)]));
        assert!(!path.with_extension("json.tmp").exists(), "renamed away");
        std::fs::write(&path, b"{not json").unwrap();
        assert!(read::<BTreeMap<String, u32>>(&path).is_err());
    }
}
