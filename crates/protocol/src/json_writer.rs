//! Writes a string as a JSON string literal, byte for byte as serde_json
//! does, but faster for the strings that dominate sluice's responses:
//! message bodies.
//!
//! serde_json escapes a string by looking up every byte in a table. Bodies
//! of kilobytes rarely hold a byte that needs escaping, so this writer checks
//! sixteen bytes at a time (SSE2) or eight (elsewhere) for one (a quote, a
//! backslash or a control byte) and copies clean runs whole. Profiling a send/receive/delete load put
//! serde_json's string escaping at 13% of the server's instructions.

/// Appends `s` as a JSON string literal, escaped as serde_json does.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        out.extend_from_slice(&bytes[start..at]);
        escape_byte(out, bytes[at]);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The position of the next byte at or after `from` that must be escaped.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    let from = match sse2::scan(bytes, from) {
        Ok(found) => return Some(found),
        Err(resume) => resume,
    };
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let w = u64::from_le_bytes(word);
        // A byte below 0x20, or equal to '"' or '\\', flags its word.
        let control = w.wrapping_sub(LO * 0x20) & !w & HI;
        let quote = has_zero(w ^ (LO * u64::from(b'"')));
        let backslash = has_zero(w ^ (LO * u64::from(b'\\')));
        if control | quote | backslash != 0 {
            break;
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| needs_escape(b))
        .map(|p| i + p)
}

/// Sixteen bytes a step with SSE2, which every x86_64 processor has: the
/// word scan above costs about twice the instructions per byte, and
/// escaping bodies was the largest of the writer's costs (docs/benchmarks.md).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// `Ok(position)` of the first byte to escape at or after `from` among
    /// whole 16-byte blocks, or `Err(resume)`: where fewer than 16 bytes are
    /// left for the caller to check.
    pub(super) fn scan(bytes: &[u8], from: usize) -> Result<usize, usize> {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64
        // processor has it.
        unsafe { scan_sse2(bytes, from) }
    }

    #[target_feature(enable = "sse2")]
    fn scan_sse2(bytes: &[u8], from: usize) -> Result<usize, usize> {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let last_control = _mm_set1_epi8(0x1F);
        let mut i = from;
        while i + 16 <= bytes.len() {
            // SAFETY: `i + 16 <= bytes.len()`, so the unaligned 16-byte
            // load reads only bytes of the slice.
            let v = unsafe { _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>()) };
            // Unsigned min(v, 0x1F) == v exactly for the bytes below 0x20.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, last_control), v);
            let special = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
            let mask = _mm_movemask_epi8(_mm_or_si128(control, special));
            if mask != 0 {
                return Ok(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
        Err(i)
    }
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Writes the escape of one byte the way serde_json does.
fn escape_byte(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0C => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xF)],
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_serde_json(value: &str) {
        let mut ours = Vec::new();
        write_str(&mut ours, value);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(value).unwrap()
        );
    }

    #[test]
    fn every_byte_value_in_every_position_is_written_as_serde_json_does() {
        // Each ASCII byte (controls, quote, backslash included) and some
        // multi-byte characters, at every offset of a 31-byte string
        // (16 + 8 + 7) so the 16-byte scan, the word scan and the tail all
        // see them.
        let specials: Vec<String> = (0u8..0x80)
            .map(|b| (b as char).to_string())
            .chain(["é", "😀", "\u{7f}", "\u{2028}", "\u{FEFF}"].map(String::from))
            .collect();
        for special in &specials {
            for at in 0..31 {
                let mut s = "a".repeat(at);
                s.push_str(special);
                s.push_str(&"b".repeat(30 - at));
                same_as_serde_json(&s);
            }
        }
    }
}
