//! Advisory lock keys: one number per job that must run on one node at a
//! time. Queue keys are queue ids (positive); these are negative so they
//! never meet one.

/// Schema migrations.
pub const MIGRATIONS: i64 = -7_305_001;
/// The retention and expiry sweep.
pub const SWEEP: i64 = -7_305_002;

/// The key a named claim (e.g. a move task) locks: a stable hash, kept
/// negative and apart from the fixed keys above.
pub fn claim_key(name: &str) -> i64 {
    // FNV-1a: stable across builds and platforms, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    -((h >> 2) as i64) - 10_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_keys_are_stable_and_apart_from_queue_ids() {
        assert_eq!(claim_key("move-task:a"), claim_key("move-task:a"));
        assert_ne!(claim_key("move-task:a"), claim_key("move-task:b"));
        assert!(claim_key("x") < -10_000_000);
    }
}
