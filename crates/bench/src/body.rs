//! Message bodies that carry a unique id: `sb1:RUN:PRODUCER:COUNTER:`,
//! padded with `x` to the requested size.
//!
//! The run id keeps messages left in a queue by an earlier run (or sent by
//! anyone else) from being counted as this run's.

/// Marks a body as written by `sluice bench` (format version 1).
const MAGIC: &str = "sb1";

/// Which message of a run a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageKey {
    /// The producer that sent it.
    pub producer: u32,
    /// That producer's counter.
    pub counter: u64,
}

/// Writes and reads bodies of one run.
#[derive(Debug, Clone)]
pub struct BodyCodec {
    run: String,
    /// `size` bytes of padding, copied from rather than written byte by byte
    /// (this is on the producers' hot path).
    padding: String,
}

impl BodyCodec {
    /// Bodies of run `run` (no `:` in it), padded to `size` bytes.
    pub fn new(run: String, size: usize) -> Self {
        Self {
            run,
            padding: "x".repeat(size),
        }
    }

    /// The body of one message: its id, then padding up to the size (a body
    /// never shorter than its id, so a tiny size still yields unique bodies).
    pub fn encode(&self, key: MessageKey) -> String {
        use std::fmt::Write as _;
        let mut body = String::with_capacity(self.padding.len().max(64));
        // Writing to a String cannot fail.
        let _ = write!(
            body,
            "{MAGIC}:{}:{}:{}:",
            self.run, key.producer, key.counter
        );
        if let Some(pad) = self.padding.get(body.len()..) {
            body.push_str(pad);
        }
        body
    }

    /// The id in a body, `None` for a body this run did not write.
    pub fn decode(&self, body: &str) -> Option<MessageKey> {
        let mut parts = body.splitn(5, ':');
        if parts.next()? != MAGIC || parts.next()? != self.run {
            return None;
        }
        let producer = parts.next()?.parse().ok()?;
        let counter = parts.next()?.parse().ok()?;
        parts.next()?;
        Some(MessageKey { producer, counter })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_size() {
        let codec = BodyCodec::new("abcd1234".into(), 1024);
        let key = MessageKey {
            producer: 7,
            counter: 123_456,
        };
        let body = codec.encode(key);
        assert_eq!(body.len(), 1024);
        assert_eq!(codec.decode(&body), Some(key));
    }

    #[test]
    fn other_runs_and_foreign_bodies_are_not_ours() {
        let ours = BodyCodec::new("run1".into(), 64);
        let theirs = BodyCodec::new("run2".into(), 64);
        let body = theirs.encode(MessageKey {
            producer: 0,
            counter: 1,
        });
        assert_eq!(ours.decode(&body), None);
        assert_eq!(ours.decode("hello"), None);
        assert_eq!(ours.decode("sb1:run1:x:1:"), None);
    }

    #[test]
    fn a_size_below_the_id_keeps_the_whole_id() {
        let codec = BodyCodec::new("r".into(), 4);
        let key = MessageKey {
            producer: 1,
            counter: 2,
        };
        assert_eq!(codec.decode(&codec.encode(key)), Some(key));
    }
}
