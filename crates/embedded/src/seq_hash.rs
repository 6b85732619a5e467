//! A hasher for maps keyed by message sequence numbers.
//!
//! Sequences are assigned by the engine, never chosen by a client, so the
//! flooding resistance of std's SipHash buys nothing here, while hashing
//! every send, receive and delete with it cost ~3 % of the server's
//! instructions. A Fibonacci multiply spreads consecutive sequences over
//! the high bits that hashbrown's control bytes use.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by sequence number.
pub type SeqMap<V> = HashMap<u64, V, BuildHasherDefault<SeqHasher>>;

/// Hashes one `u64` by a multiply; other inputs fall back to FNV-1a.
#[derive(Default, Clone, Copy)]
pub struct SeqHasher(u64);

impl Hasher for SeqHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn consecutive_sequences_differ_in_their_top_bits() {
        let build = BuildHasherDefault::<SeqHasher>::default();
        let tops: std::collections::HashSet<u64> =
            (0..128u64).map(|s| build.hash_one(s) >> 57).collect();
        // hashbrown keeps the top 7 bits per slot: consecutive keys must
        // not all share them, or every probe would compare keys.
        assert!(
            tops.len() > 64,
            "only {} distinct top-7-bit values",
            tops.len()
        );
    }

    #[test]
    fn a_seq_map_finds_what_it_holds() {
        let mut map = SeqMap::default();
        for s in 0..10_000u64 {
            map.insert(s * 3, s);
        }
        assert!((0..10_000u64).all(|s| map.get(&(s * 3)) == Some(&s)));
        assert_eq!(map.get(&1), None);
    }
}
