//! `sluice keys`: the keyring file of encryption at rest. Creates one,
//! rotates its active key, retires old keys and lists them. The commands
//! work on the file alone and talk to no server; a server reads the file
//! when it starts (`sluice serve --encryption-key-file`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use sluice_keyring::{KeyringError, KeyringFile};

use crate::admin::out;
use crate::table::Table;
use crate::timefmt::{now_ms, rfc3339};

/// `sluice keys …`.
#[derive(Args, Debug)]
#[command(after_help = "\
The keyring file is JSON, readable by its owner only: named 256-bit keys, one \
of them active. A server started with it (`sluice serve --encryption-key-file \
FILE`, or [encryption] key_file in its config file) encrypts the messages of \
queues with server-side encryption (SqsManagedSseEnabled, or a KmsMasterKeyId \
naming a key of the file as NAME or alias/NAME) with data keys that the file's \
keys wrap. The server reads the file only when it starts.

Rotation: `sluice keys rotate --file FILE`, restart the servers that use the \
file, then `sluice keys retire --file FILE OLD`. Keep a copy of the file apart \
from the data: without it, the data it encrypts cannot be read.")]
pub struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
}

#[derive(Subcommand, Debug)]
enum KeysCommand {
    /// Create a keyring file holding one fresh key, the active one. An
    /// existing file is never overwritten.
    New(NewArgs),
    /// Add a fresh key to the file and make it the active one. The other
    /// keys stay, for the data they still encrypt; restart the servers so
    /// that they re-wrap their data keys with the new key.
    Rotate(RotateArgs),
    /// Forget a key's material for good, keeping its name as retired: data
    /// still encrypted under it becomes unreadable when a server next
    /// starts (crypto-shredding). The active key cannot be retired.
    Retire(RetireArgs),
    /// The keys of the file: name, when it was made (UTC) and its state:
    /// active, live (kept for the data it encrypts) or retired. Never the
    /// key material.
    List(ListArgs),
}

#[derive(Args, Debug)]
struct NewArgs {
    /// The keyring file to create; it must not exist yet.
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
    /// Name of the key: 1 to 64 of A-Z, a-z, 0-9, `-` and `_`. Queues may
    /// name it in KmsMasterKeyId [default: key-YYYYMMDD-HHMMSS, now in UTC].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(Args, Debug)]
struct RotateArgs {
    /// The keyring file.
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
    /// Name of the new key: 1 to 64 of A-Z, a-z, 0-9, `-` and `_`, not
    /// already in the file [default: key-YYYYMMDD-HHMMSS, now in UTC].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(Args, Debug)]
struct RetireArgs {
    /// The keyring file.
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
    /// The key to retire (not the active one).
    #[arg(value_name = "NAME")]
    name: String,
}

#[derive(Args, Debug)]
struct ListArgs {
    /// The keyring file.
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
}

/// Runs the command: exit 0, or an error naming the file.
pub fn run(args: KeysArgs) -> anyhow::Result<u8> {
    let now = now_ms() / 1000;
    let report = match args.command {
        KeysCommand::New(a) => new_keyring(&a.file, a.name.as_deref(), now)?,
        KeysCommand::Rotate(a) => rotate(&a.file, a.name.as_deref(), now)?,
        KeysCommand::Retire(a) => retire(&a.file, &a.name, now)?,
        KeysCommand::List(a) => list(&a.file)?,
    };
    out!("{report}");
    Ok(0)
}

/// `keys new`: a new file with one fresh active key; what was done.
fn new_keyring(path: &Path, name: Option<&str>, now: u64) -> anyhow::Result<String> {
    let name = key_name(name, now);
    let file = KeyringFile::new_with_key(&name, now).map_err(plain)?;
    reserve(path)?;
    if let Err(e) = file.write(path) {
        // Only the empty file reserved above is removed, never a keyring.
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(path);
        }
        return Err(plain(e));
    }
    let shown = path.display();
    Ok(format!(
        "created {shown} with the active key {name}\n\
         start a server with it: sluice serve --encryption-key-file {shown}\n\
         keep a copy of the file apart from the data: without it, the data it encrypts cannot be read\n"
    ))
}

/// Creates `path`, empty and private, so that no other file takes its
/// place before the keyring is renamed over it; refuses an existing file.
fn reserve(path: &Path) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => anyhow::bail!(
            "{0} already exists: `sluice keys new` never overwrites a file (a keyring may hold \
             the only key to stored data); add a key to it with `sluice keys rotate --file {0}`, \
             or choose another path",
            path.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
}

/// `keys rotate`: a fresh key, made active; what was done and what the
/// operator does next.
fn rotate(path: &Path, name: Option<&str>, now: u64) -> anyhow::Result<String> {
    let mut file = read(path)?;
    let previous = file.active.clone();
    let name = key_name(name, now);
    file.add_active(&name, now)
        .map_err(|e| in_file(path, e))
        .context("cannot add the key (choose another with --name)")?;
    file.write(path).map_err(plain)?;
    let shown = path.display();
    Ok(format!(
        "added the key {name} to {shown}; it is now the active key (was {previous})\n\
         next:\n  \
         1. reload every server that uses {shown} (SIGHUP: kill -HUP, systemctl reload) or \
         restart it: each re-wraps the data keys it manages (queues with \
         SqsManagedSseEnabled, or KmsMasterKeyId alias/aws/sqs) with {name} and logs \
         \"reloaded the encryption keyring\"; new data keys are wrapped by {name}\n  \
         2. then retire the previous key: sluice keys retire --file {shown} {previous}\n     \
         queues whose KmsMasterKeyId names {previous} keep using it: their data becomes \
         unreadable when it is retired\n"
    ))
}

/// `keys retire`: forgets a key's material; what was done, with the
/// warning that its data is gone.
fn retire(path: &Path, name: &str, now: u64) -> anyhow::Result<String> {
    let mut file = read(path)?;
    let shown = path.display();
    if file
        .keys
        .iter()
        .any(|k| k.name == name && k.retired.is_some())
    {
        return Ok(format!("{name} is already retired; {shown} is unchanged\n"));
    }
    file.retire(name, now)
        .map_err(|e| in_file(path, e))
        .with_context(|| format!("cannot retire {name}"))?;
    file.write(path).map_err(plain)?;
    Ok(format!(
        "retired {name} in {shown}: its key material is gone from the file\n\
         warning: data still encrypted under {name} becomes unreadable when a server next starts \
         with this keyring (crypto-shredding); a server running now (reloaded or not) keeps \
         the key until it restarts\n"
    ))
}

/// `keys list`: a table of the keys, without their material.
fn list(path: &Path) -> anyhow::Result<String> {
    let file = read(path)?;
    let mut t = Table::new(&["KEY", "CREATED (UTC)", "STATE"]);
    for k in &file.keys {
        let state = if k.name == file.active {
            "active"
        } else if k.retired.is_some() || k.material.is_none() {
            "retired"
        } else {
            "live"
        };
        t.row(vec![k.name.clone(), utc(k.created), state.to_string()]);
    }
    Ok(t.render())
}

/// The key name given, or `key-YYYYMMDD-HHMMSS` of `now` (seconds, UTC).
fn key_name(given: Option<&str>, now: u64) -> String {
    match given {
        Some(name) => name.to_string(),
        None => {
            let digits: String = utc(now).chars().filter(char::is_ascii_digit).collect();
            format!("key-{}-{}", &digits[..8], &digits[8..14])
        }
    }
}

/// Seconds since the epoch as `2026-01-31T10:00:00Z`.
fn utc(secs: u64) -> String {
    let text = rfc3339(secs.saturating_mul(1000));
    match text.strip_suffix(".000Z") {
        Some(whole) => format!("{whole}Z"),
        None => text,
    }
}

fn read(path: &Path) -> anyhow::Result<KeyringFile> {
    KeyringFile::read(path).map_err(|e| in_file(path, e))
}

/// A keyring error as a message that names the file once.
fn in_file(path: &Path, e: KeyringError) -> anyhow::Error {
    match e {
        KeyringError::Malformed(m) => anyhow::anyhow!("keyring file {}: {m}", path.display()),
        e => plain(e),
    }
}

/// A keyring error without the `keyring: ` its malformed variant starts
/// with (the messages here say which file).
fn plain(e: KeyringError) -> anyhow::Error {
    match e {
        KeyringError::Malformed(m) => anyhow::anyhow!(m),
        e => anyhow::Error::new(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-31T10:20:30Z.
    const NOW: u64 = 1_769_854_830;

    fn keyring(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().join("keyring.json")
    }

    #[test]
    fn new_names_its_key_after_the_time_and_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = keyring(&dir);
        let report = new_keyring(&path, None, NOW).unwrap();
        assert!(
            report.contains("the active key key-20260131-102030"),
            "{report}"
        );
        let before = std::fs::read(&path).unwrap();
        let e = new_keyring(&path, Some("other"), NOW + 1).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "the file is untouched"
        );
        let file = KeyringFile::read(&path).unwrap();
        assert_eq!(file.active, "key-20260131-102030");
        assert_eq!(file.keys.len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn new_with_a_bad_name_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = keyring(&dir);
        let e = new_keyring(&path, Some("no spaces"), NOW).unwrap_err();
        assert!(e.to_string().contains("1 to 64"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn rotate_makes_the_new_key_active_and_keeps_the_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = keyring(&dir);
        new_keyring(&path, Some("first"), NOW).unwrap();
        let report = rotate(&path, Some("second"), NOW + 60).unwrap();
        assert!(report.contains("reload every server"), "{report}");
        assert!(
            report.contains(&format!(
                "sluice keys retire --file {} first",
                path.display()
            )),
            "{report}"
        );
        let file = KeyringFile::read(&path).unwrap();
        assert_eq!(file.active, "second");
        let names: Vec<_> = file.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        assert!(file.keys.iter().all(|k| k.material.is_some()));
        assert_ne!(file.keys[0].material, file.keys[1].material);
        assert_eq!(
            sluice_keyring::Keyring::load(&path).unwrap().active(),
            "second"
        );
        let e = rotate(&path, Some("first"), NOW + 120).unwrap_err();
        assert!(
            format!("{e:#}").contains("already has a key named"),
            "{e:#}"
        );
        let e = rotate(&dir.path().join("missing.json"), None, NOW).unwrap_err();
        assert!(e.to_string().contains("missing.json"), "{e}");
    }

    #[test]
    fn retire_refuses_the_active_key_and_removes_material() {
        let dir = tempfile::tempdir().unwrap();
        let path = keyring(&dir);
        new_keyring(&path, Some("old"), NOW).unwrap();
        rotate(&path, Some("new"), NOW + 1).unwrap();
        let e = retire(&path, "new", NOW + 2).unwrap_err();
        assert!(format!("{e:#}").contains("is the active key"), "{e:#}");
        let e = retire(&path, "absent", NOW + 2).unwrap_err();
        assert!(format!("{e:#}").contains("no key named"), "{e:#}");
        let report = retire(&path, "old", NOW + 2).unwrap();
        assert!(report.contains("warning: data still encrypted under old becomes unreadable"));
        assert!(report.contains("crypto-shredding"), "{report}");
        let file = KeyringFile::read(&path).unwrap();
        assert_eq!(file.keys[0].name, "old");
        assert_eq!(file.keys[0].material, None);
        assert_eq!(file.keys[0].retired, Some(NOW + 2));
        assert!(file.keys[1].material.is_some());
        let again = retire(&path, "old", NOW + 3).unwrap();
        assert!(again.contains("already retired"), "{again}");
        assert_eq!(
            KeyringFile::read(&path).unwrap().keys[0].retired,
            Some(NOW + 2)
        );
    }

    #[test]
    fn list_shows_names_times_and_states_but_no_material() {
        let dir = tempfile::tempdir().unwrap();
        let path = keyring(&dir);
        new_keyring(&path, Some("a"), NOW).unwrap();
        rotate(&path, Some("b"), NOW + 60).unwrap();
        rotate(&path, Some("c"), NOW + 120).unwrap();
        retire(&path, "a", NOW + 180).unwrap();
        let table = list(&path).unwrap();
        assert_eq!(
            table,
            "KEY  CREATED (UTC)         STATE\n\
             a    2026-01-31T10:20:30Z  retired\n\
             b    2026-01-31T10:21:30Z  live\n\
             c    2026-01-31T10:22:30Z  active\n"
        );
        for k in KeyringFile::read(&path).unwrap().keys {
            if let Some(m) = k.material {
                assert!(!table.contains(&m));
            }
        }
    }
}
