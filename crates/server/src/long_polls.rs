//! The server-wide cap on parked long polls (rule H5): a ReceiveMessage
//! that would wait takes a place; beyond the cap it does not wait, and
//! answers with what is there now (SQS may answer a long poll early, with
//! no messages, and clients poll again).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many long polls wait now, the cap, and how many found it full.
#[derive(Debug, Default)]
pub struct LongPolls {
    /// Most long polls waiting at once; 0: no cap.
    limit: AtomicUsize,
    waiting: AtomicUsize,
    capped: AtomicU64,
}

/// A long poll's place, given back when it is dropped.
#[derive(Debug)]
pub struct Place<'a>(&'a LongPolls);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

impl LongPolls {
    /// Caps the long polls waiting at once at `limit` (`None`: no cap).
    pub fn set_limit(&self, limit: Option<usize>) {
        self.limit.store(limit.unwrap_or(0), Ordering::Relaxed);
    }

    /// A place for one more long poll, or `None` when the cap is reached
    /// (counted in [`LongPolls::capped`]).
    pub fn take(&self) -> Option<Place<'_>> {
        let limit = self.limit.load(Ordering::Relaxed);
        let taken = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (limit == 0 || n < limit).then_some(n + 1)
            });
        match taken {
            Ok(_) => Some(Place(self)),
            Err(_) => {
                self.capped.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Long polls waiting (or about to) now.
    pub fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::Relaxed) as u64
    }

    /// Receives that would have waited but found the cap reached.
    pub fn capped(&self) -> u64 {
        self.capped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H5: places up to the cap; a place given back is taken again; no
    /// cap takes any number.
    #[test]
    fn h5_places_up_to_the_cap() {
        let polls = LongPolls::default();
        polls.set_limit(Some(2));
        let a = polls.take().expect("first");
        let _b = polls.take().expect("second");
        assert!(polls.take().is_none());
        assert_eq!((polls.waiting(), polls.capped()), (2, 1));
        drop(a);
        assert!(polls.take().is_some());
        polls.set_limit(None);
        let many: Vec<_> = (0..100).map(|_| polls.take().expect("no cap")).collect();
        assert_eq!(many.len(), 100);
    }
}
