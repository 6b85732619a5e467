//! A record's format: the segment magic, the 16-byte header (CRC-32,
//! length, LSN), sealing a record and reading records back; where a
//! message's data lies in a segment.

use std::io;

use super::error::LogError;

pub(super) const MAGIC: &[u8; 8] = b"SLUICEW1";

pub(super) const START: u64 = MAGIC.len() as u64;

/// Bytes of a record's header.
pub const HEADER: usize = 16;

/// Where a message's encoded data lies in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyAt {
    /// The segment.
    pub segment: u64,
    /// Its first byte in the segment file.
    pub offset: u64,
    /// Its length.
    pub len: u32,
}

/// Fills in the header of record `lsn`, whose payload follows the header
/// room in `buf`.
pub(super) fn seal(lsn: u64, buf: &mut [u8]) -> io::Result<()> {
    let len = u32::try_from(buf.len() - HEADER)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "log record over 4 GiB"))?;
    buf[4..8].copy_from_slice(&len.to_le_bytes());
    buf[8..16].copy_from_slice(&lsn.to_le_bytes());
    let crc = crc32fast::hash(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// A record read back at start-up.
#[derive(Debug)]
pub struct Recovered {
    /// Its sequence number.
    pub lsn: u64,
    /// Its encoded changes.
    pub payload: Vec<u8>,
    /// The segment and file offset of its payload; `None` for a record of
    /// the legacy file, which is removed once replayed.
    pub at: Option<(u64, u64)>,
}

/// The records of `bytes` (a log without its magic) after `applied`; with
/// `segment`, each with where its payload starts in that segment's file.
/// Also returns the file offset where the last record read ends.
pub(crate) fn read_records(
    bytes: &[u8],
    applied: u64,
    segment: Option<u64>,
) -> Result<(Vec<Recovered>, u64), LogError> {
    let mut out = Vec::new();
    let mut last: Option<u64> = None;
    let mut at = START;
    let mut rest = bytes;
    while rest.len() >= HEADER {
        let crc = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let Some(record) = rest.get(..HEADER + len) else {
            break;
        };
        if crc32fast::hash(&record[4..]) != crc {
            break;
        }
        let mut lsn = [0u8; 8];
        lsn.copy_from_slice(&record[8..16]);
        let lsn = u64::from_le_bytes(lsn);
        match last {
            Some(prev) if lsn != prev + 1 => break,
            None if lsn > applied + 1 => {
                return Err(LogError::Gap {
                    first: lsn,
                    applied,
                });
            }
            _ => {}
        }
        if lsn > applied {
            out.push(Recovered {
                lsn,
                payload: record[HEADER..].to_vec(),
                at: segment.map(|s| (s, at + HEADER as u64)),
            });
        }
        last = Some(lsn);
        at += (HEADER + len) as u64;
        rest = &rest[HEADER + len..];
    }
    Ok((out, at))
}
