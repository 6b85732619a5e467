//! Timestamps in milliseconds since the epoch, to and from RFC 3339 (UTC),
//! for logs, notifications and the command line.

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// `2026-01-01T00:00:00.000Z`.
pub fn rfc3339(ms: u64) -> String {
    let ms = ms as i64;
    let (days, rest) = (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY));
    let (y, m, d) = civil_from_days(days);
    let secs = rest / 1000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60,
        rest % 1000
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` or `YYYY-MM-DD` (UTC).
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) {
        return None;
    }
    if !(1..=31).contains(&d) {
        return None;
    }
    let day_ms = days_from_civil(y, mo, d) * MS_PER_DAY;
    if b.len() == 10 {
        return u64::try_from(day_ms).ok();
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if b.get(16) != Some(&b':') || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = text.get(start..i)?;
        if digits.is_empty() {
            return None;
        }
        let padded = format!("{digits:0<3}");
        frac_ms = padded.get(..3)?.parse::<i64>().ok()?;
    }
    let offset_ms = match text.get(i..)? {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) => {
            let oh = num(i + 1, 2)?;
            let om = num(i + 4, 2)?;
            if b.get(i + 3) != Some(&b':') {
                return None;
            }
            let off = (oh * 3600 + om * 60) * 1000;
            if tz.starts_with('+') { off } else { -off }
        }
        _ => return None,
    };
    let ms = day_ms + ((h * 3600 + mi * 60 + s) * 1000) + frac_ms - offset_ms;
    u64::try_from(ms).ok()
}

/// Milliseconds since the epoch of ISO 8601's basic format in UTC,
/// `20150830T123600Z` (SigV4's `X-Amz-Date`); `None` for anything else.
/// The same checks as [`parse_rfc3339`], without building its text: it runs
/// on every signed request.
pub fn parse_basic_utc(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        b[from..from + len].iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, mo, d) = (num(0, 4)?, num(4, 2)?, num(6, 2)?);
    let (h, mi, s) = (num(9, 2)?, num(11, 2)?, num(13, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let ms = days_from_civil(y, mo, d) * MS_PER_DAY + (h * 3600 + mi * 60 + s) * 1000;
    u64::try_from(ms).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `parse_basic_utc` must agree with: the basic format rewritten
    /// as RFC 3339.
    fn basic_through_rfc3339(text: &str) -> Option<u64> {
        let b = text.as_bytes();
        if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' || !text.is_ascii() {
            return None;
        }
        parse_rfc3339(&format!(
            "{}-{}-{}T{}:{}:{}Z",
            &text[0..4],
            &text[4..6],
            &text[6..8],
            &text[9..11],
            &text[11..13],
            &text[13..15]
        ))
    }

    #[test]
    fn basic_format_reads_as_rfc3339_does() {
        assert_eq!(parse_basic_utc("20150830T123600Z"), Some(1_440_938_160_000));
        assert_eq!(parse_basic_utc("19700101T000000Z"), Some(0));
        let mut cases = vec![
            "20150830T123600Z".to_string(),
            "20240229T235960Z".into(),
            "20150830T123600z".into(),
            "20150830 123600Z".into(),
            "2015083T1236000Z".into(),
            "2015-830T123600Z".into(),
            "20150830T12360Z".into(),
            "+0150830T123600Z".into(),
            "20150830T1236\u{e9}Z".into(),
        ];
        for month in [0, 1, 12, 13] {
            for day in [0, 1, 31, 32] {
                for (h, m, s) in [(0, 0, 0), (23, 59, 60), (24, 0, 0), (0, 60, 0), (0, 0, 61)] {
                    cases.push(format!("2026{month:02}{day:02}T{h:02}{m:02}{s:02}Z"));
                }
            }
        }
        for case in &cases {
            assert_eq!(parse_basic_utc(case), basic_through_rfc3339(case), "{case}");
        }
    }

    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_767_225_600_000), "2026-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_709_208_000_123), "2024-02-29T12:00:00.123Z");
        for ms in [0, 951_782_400_000, 1_767_225_600_000, 4_102_444_799_999] {
            assert_eq!(parse_rfc3339(&rfc3339(ms)), Some(ms));
        }
    }

    #[test]
    fn rfc3339_accepts_offsets_and_dates_and_refuses_garbage() {
        assert_eq!(
            parse_rfc3339("2026-01-01T01:00:00+01:00"),
            Some(1_767_225_600_000)
        );
        assert_eq!(parse_rfc3339("2026-01-01"), Some(1_767_225_600_000));
        assert_eq!(
            parse_rfc3339("2026-01-01T00:00:00.5Z"),
            Some(1_767_225_600_500)
        );
        for bad in [
            "2026-13-01",
            "2026-01-01T25:00:00Z",
            "yesterday",
            "2026-01-01T00:00:00",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
