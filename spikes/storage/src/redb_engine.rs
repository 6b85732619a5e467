//! redb 4.x (copy-on-write B-tree, single file). Default durability is
//! `Durability::Immediate`: `commit()` returns only after the fsync.
//! `quick_repair` (the "redb-qr" variant) additionally persists the allocator
//! state on every commit so that opening after a crash needs no full repair walk.

use crate::engine::{Batch, Engine, Key, Res, Scan, State};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::Path;

const MSG: TableDefinition<&Key, &[u8]> = TableDefinition::new("msg");
const STATE: TableDefinition<&Key, &State> = TableDefinition::new("state");

pub struct RedbEngine {
    db: Database,
    quick_repair: bool,
}

impl RedbEngine {
    pub fn open(dir: &Path, quick_repair: bool) -> Res<Self> {
        let db = Database::create(dir.join("sluice.redb"))?;
        let mut me = Self { db, quick_repair };
        me.commit(&Batch::default())?; // create tables
        Ok(me)
    }
}

impl Engine for RedbEngine {
    fn commit(&mut self, b: &Batch) -> Res<()> {
        let mut tx = self.db.begin_write()?; // Durability::Immediate by default
        tx.set_quick_repair(self.quick_repair);
        {
            let mut msg = tx.open_table(MSG)?;
            let mut state = tx.open_table(STATE)?;
            for (k, body, st) in &b.inserts {
                msg.insert(k, body.as_slice())?;
                state.insert(k, st)?;
            }
            for (k, st) in &b.updates {
                state.insert(k, st)?;
            }
            for k in &b.deletes {
                msg.remove(k)?;
                state.remove(k)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn scan_all(&mut self) -> Res<Scan> {
        let rx = self.db.begin_read()?;
        let mut states = Vec::new();
        for r in rx.open_table(STATE)?.iter()? {
            let (k, v) = r?;
            states.push((*k.value(), *v.value()));
        }
        let mut messages = Vec::new();
        for r in rx.open_table(MSG)?.iter()? {
            let (k, v) = r?;
            messages.push((*k.value(), v.value().to_vec()));
        }
        Ok(Scan { states, messages })
    }

    fn reclaim(&mut self) -> Res<()> {
        // Freed pages are reused by later commits but the file only shrinks on compact().
        while self.db.compact()? {}
        Ok(())
    }
}
