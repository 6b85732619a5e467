//! SQLite (bundled, via rusqlite). WAL mode + synchronous=FULL: each COMMIT
//! fsyncs the WAL. One transaction per group commit, cached prepared statements.

use crate::engine::{Batch, Engine, Res, Scan};
use rusqlite::{Connection, params};
use std::path::Path;

pub struct SqliteEngine {
    conn: Connection,
}

// Key is the 16-byte BLOB. The 1.1 KiB message rows live in a rowid table (the
// blob PRIMARY KEY becomes a separate unique index): in a WITHOUT ROWID table
// with 4 KiB pages a row over ~1 KiB spills into an overflow page.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS msg(k BLOB PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS state(k BLOB PRIMARY KEY, st BLOB NOT NULL) WITHOUT ROWID;
";

impl SqliteEngine {
    pub fn open(dir: &Path) -> Res<Self> {
        let conn = Connection::open(dir.join("sluice.sqlite"))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self { conn })
    }
}

impl Engine for SqliteEngine {
    fn commit(&mut self, b: &Batch) -> Res<()> {
        let tx = self.conn.transaction()?;
        {
            let mut ins_msg = tx.prepare_cached("INSERT INTO msg(k, body) VALUES (?1, ?2)")?;
            let mut ins_st = tx.prepare_cached("INSERT INTO state(k, st) VALUES (?1, ?2)")?;
            let mut upd_st = tx.prepare_cached("UPDATE state SET st = ?2 WHERE k = ?1")?;
            let mut del_msg = tx.prepare_cached("DELETE FROM msg WHERE k = ?1")?;
            let mut del_st = tx.prepare_cached("DELETE FROM state WHERE k = ?1")?;
            for (k, body, st) in &b.inserts {
                ins_msg.execute(params![&k[..], body])?;
                ins_st.execute(params![&k[..], &st[..]])?;
            }
            for (k, st) in &b.updates {
                upd_st.execute(params![&k[..], &st[..]])?;
            }
            for k in &b.deletes {
                del_msg.execute(params![&k[..]])?;
                del_st.execute(params![&k[..]])?;
            }
        }
        tx.commit()?; // fsync of the WAL (synchronous=FULL)
        Ok(())
    }

    fn scan_all(&mut self) -> Res<Scan> {
        let mut states = Vec::new();
        let mut q = self.conn.prepare("SELECT k, st FROM state")?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let k: Vec<u8> = r.get(0)?;
            let s: Vec<u8> = r.get(1)?;
            states.push((k.as_slice().try_into()?, s.as_slice().try_into()?));
        }
        let mut messages = Vec::new();
        let mut q = self.conn.prepare("SELECT k, body FROM msg")?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let k: Vec<u8> = r.get(0)?;
            messages.push((k.as_slice().try_into()?, r.get(1)?));
        }
        Ok(Scan { states, messages })
    }

    fn reclaim(&mut self) -> Res<()> {
        // Deleted pages go to the freelist (reused, file does not shrink); VACUUM
        // rewrites the file, then truncate the WAL.
        self.conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }
}
