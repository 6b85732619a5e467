//! The time arguments of the filters (`--since 2h`, `--until 2026-…`);
//! RFC 3339 itself is in `sluice_core::timestamp`.

use std::time::{SystemTime, UNIX_EPOCH};

pub use sluice_core::timestamp::{parse_rfc3339, rfc3339};

/// Now, in milliseconds since the epoch (this machine's clock).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Parses a duration like `90s`, `15m`, `2h`, `7d` (or plain seconds).
pub fn parse_duration_secs(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = digits.parse().ok()?;
    let factor = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// A point in time given on the command line, in ms since the epoch: an
/// RFC 3339 time (`2026-01-01T10:00:00Z`), a date (`2026-01-01`), a
/// duration before `now` (`2h` = two hours ago), or epoch milliseconds.
pub fn parse_time_arg(text: &str, now: u64) -> Result<u64, String> {
    if let Some(ms) = parse_rfc3339(text) {
        return Ok(ms);
    }
    if let Some(secs) = parse_duration_secs(text)
        && text.ends_with(|c: char| c.is_ascii_alphabetic())
    {
        return Ok(now.saturating_sub(secs.saturating_mul(1000)));
    }
    if text.len() >= 10 && text.bytes().all(|c| c.is_ascii_digit()) {
        return text.parse().map_err(|e| format!("{text:?}: {e}"));
    }
    Err(format!(
        "{text:?} is not a time: use RFC 3339 (2026-01-31T10:00:00Z), a date (2026-01-31), \
         an age (30m, 2h, 7d: that long ago) or epoch milliseconds"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_arguments_take_ages_dates_and_epoch_millis() {
        let now = 1_767_225_600_000;
        assert_eq!(parse_time_arg("2h", now), Ok(now - 7_200_000));
        assert_eq!(parse_time_arg("2026-01-01", now), Ok(now));
        assert_eq!(parse_time_arg("1767225600000", now), Ok(now));
        assert!(parse_time_arg("soon", now).is_err());
        assert!(parse_time_arg("12", now).is_err());
        assert_eq!(parse_duration_secs("15m"), Some(900));
        assert_eq!(parse_duration_secs("10"), Some(10));
        assert_eq!(parse_duration_secs("3x"), None);
    }
}
