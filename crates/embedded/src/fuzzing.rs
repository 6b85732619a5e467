//! Entry points for the fuzz targets (`fuzz/`, feature `fuzzing`): every
//! decoder of bytes the engine reads back from disk. A torn write, a bad
//! sector or a hostile file may hand them anything; they must refuse what
//! they did not write, never panic or loop (rule H4).

/// Feeds `bytes` to each decoder of stored bytes: a write-ahead log
/// segment's records, a record's changes, and the store's message, head,
/// position and state records. Results are dropped: only a panic, a hang
/// or runaway memory is a finding.
#[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
pub fn decode_stored_bytes(bytes: &[u8]) {
    let _ = crate::wal::read_records(bytes, 0, Some(1));
    let _ = crate::log_record::decode(bytes, Some((1, 8)));
    let _ = crate::log_record::decode(bytes, None);
    let _ = crate::codec::decode_message(bytes, &sluice_keyring::DataKeys::new(None));
    let _ = crate::codec::decode_head(bytes);
    let _ = crate::codec::decode_in_log(bytes);
    let _ = crate::codec::decode_state(bytes);
}

#[cfg(test)]
mod tests {
    /// The entry point survives the inputs most likely to break a decoder:
    /// nothing, one tag byte of each kind, and lengths that claim more
    /// bytes than follow.
    #[test]
    fn h4_decoders_refuse_truncated_and_oversized_input() {
        super::decode_stored_bytes(&[]);
        for tag in 0..=u8::MAX {
            super::decode_stored_bytes(&[tag]);
            super::decode_stored_bytes(&[tag, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        }
        super::decode_stored_bytes(&[0xff; 64]);
    }
}
