//! fjall 3.x (LSM tree). Two keyspaces in one Database; a WriteBatch is atomic
//! across keyspaces. fjall's default is NOT durable (writes go to OS buffers),
//! so every group commit is followed by `db.persist(PersistMode::SyncAll)`.

use crate::engine::{Batch, Engine, Res, Scan};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use std::path::Path;

pub struct FjallEngine {
    db: Database,
    msg: Keyspace,
    state: Keyspace,
}

impl FjallEngine {
    pub fn open(dir: &Path) -> Res<Self> {
        let db = Database::builder(dir).open()?;
        let msg = db.keyspace("msg", KeyspaceCreateOptions::default)?;
        let state = db.keyspace("state", KeyspaceCreateOptions::default)?;
        Ok(Self { db, msg, state })
    }
}

impl Engine for FjallEngine {
    fn commit(&mut self, b: &Batch) -> Res<()> {
        let mut wb = self.db.batch();
        for (k, body, st) in &b.inserts {
            wb.insert(&self.msg, k, body.as_slice());
            wb.insert(&self.state, k, st);
        }
        for (k, st) in &b.updates {
            wb.insert(&self.state, k, st);
        }
        for k in &b.deletes {
            wb.remove(&self.msg, k);
            wb.remove(&self.state, k);
        }
        wb.commit()?; // journal write, buffered only
        self.db.persist(PersistMode::SyncAll)?; // the fsync that makes it durable
        Ok(())
    }

    fn scan_all(&mut self) -> Res<Scan> {
        let mut states = Vec::new();
        for g in self.state.iter() {
            let (k, v) = g.into_inner()?;
            states.push((k.as_ref().try_into()?, v.as_ref().try_into()?));
        }
        let mut messages = Vec::new();
        for g in self.msg.iter() {
            let (k, v) = g.into_inner()?;
            messages.push((k.as_ref().try_into()?, v.to_vec()));
        }
        Ok(Scan { states, messages })
    }

    fn reclaim(&mut self) -> Res<()> {
        // Flush memtables (lets old journals be dropped), then rewrite all tables
        // so tombstones and the data they shadow are dropped.
        for ks in [&self.msg, &self.state] {
            ks.rotate_memtable_and_wait()?;
            ks.major_compact()?;
        }
        self.db.persist(PersistMode::SyncAll)?;
        Ok(())
    }
}
