//! Message group names interned per queue, so the index holds a 4-byte id
//! per message instead of its own copy of the name.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;

/// A group name's id within one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupId(NonZeroU32);

#[derive(Debug)]
struct Slot {
    name: Arc<str>,
    /// Messages of the queue's index that carry this group.
    refs: u32,
}

/// The group names one queue's messages carry, counted so a name is
/// forgotten with its last message (a queue with a group per customer must
/// not grow for ever).
#[derive(Debug, Default)]
pub struct GroupNames {
    ids: HashMap<Arc<str>, GroupId>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
}

impl GroupNames {
    /// The id of `name`, counting one more message that carries it.
    pub fn intern(&mut self, name: &str) -> GroupId {
        if let Some(&id) = self.ids.get(name) {
            if let Some(slot) = self.slots[Self::index(id)].as_mut() {
                slot.refs += 1;
            }
            return id;
        }
        let name: Arc<str> = Arc::from(name);
        let slot = Some(Slot {
            name: name.clone(),
            refs: 1,
        });
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        // More than u32::MAX distinct live groups cannot fit in memory anyway.
        let id = GroupId(NonZeroU32::new(index as u32 + 1).unwrap_or(NonZeroU32::MIN));
        self.ids.insert(name, id);
        id
    }

    /// One message carrying `id` left the index.
    pub fn release(&mut self, id: GroupId) {
        let index = Self::index(id);
        let Some(slot) = self.slots.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        slot.refs -= 1;
        if slot.refs == 0 {
            let name = slot.name.clone();
            self.slots[index] = None;
            self.ids.remove(&name);
            self.free.push(index);
        }
    }

    /// The name behind `id`.
    pub fn name(&self, id: GroupId) -> &Arc<str> {
        static NONE: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
        match self.slots.get(Self::index(id)).and_then(Option::as_ref) {
            Some(slot) => &slot.name,
            None => &NONE,
        }
    }

    /// Forgets every name.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.slots.clear();
        self.free.clear();
    }

    /// Names currently held (for tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    fn index(id: GroupId) -> usize {
        id.0.get() as usize - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shared_and_forgotten_with_their_last_message() {
        let mut g = GroupNames::default();
        let a = g.intern("a");
        let a2 = g.intern("a");
        let b = g.intern("b");
        assert_eq!(a, a2);
        assert_ne!(a, b);
        assert_eq!(&**g.name(b), "b");
        g.release(a);
        assert_eq!(g.len(), 2);
        g.release(a2);
        assert_eq!(g.len(), 1);
        // The freed slot is reused for the next new name.
        let c = g.intern("c");
        assert_eq!(c, a);
        assert_eq!(&**g.name(c), "c");
    }
}
