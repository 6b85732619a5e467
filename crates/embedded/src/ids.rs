//! How message ids and FIFO sequence numbers are written in answers.

pub(crate) fn uuid_string(bytes: &[u8; 16]) -> String {
    // Written into a buffer of the exact length: `to_string` grows its
    // String three times, for every message received.
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (uuid::Uuid::from_bytes(*bytes).hyphenated())
        .encode_lower(&mut buf)
        .to_owned()
}

/// A FIFO sequence number as SQS writes them: a decimal string.
pub(crate) fn sequence_number(seq: u64) -> String {
    sluice_core::message::sequence_number(seq)
}
