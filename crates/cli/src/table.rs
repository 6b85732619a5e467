//! Plain-text tables, their cells (human durations, shortened text, the
//! answers' optional members) for the operator commands.

use std::fmt::{Display, Write};

/// A table printed with columns padded to their widest cell.
#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned to the right (numbers).
    right: Vec<bool>,
}

impl Table {
    /// A table with these column titles; titles ending in `>` are
    /// right-aligned (the `>` is not shown).
    pub fn new(columns: &[&str]) -> Self {
        Self {
            header: columns
                .iter()
                .map(|c| c.trim_end_matches('>').to_string())
                .collect(),
            right: columns.iter().map(|c| c.ends_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are blank).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(cell.chars().count());
                }
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                let pad = width.saturating_sub(cell.chars().count());
                if i > 0 {
                    line.push_str("  ");
                }
                if self.right[i] {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}

/// A duration in seconds as `45s`, `12m`, `3h20m`, `4d` or `2d3h`.
pub fn duration(secs: u64) -> String {
    const MIN: u64 = 60;
    const HOUR: u64 = 3600;
    const DAY: u64 = 86_400;
    match secs {
        s if s < MIN => format!("{s}s"),
        s if s < HOUR => {
            if s % MIN == 0 {
                format!("{}m", s / MIN)
            } else {
                format!("{}m{}s", s / MIN, s % MIN)
            }
        }
        s if s < DAY => {
            if s % HOUR == 0 {
                format!("{}h", s / HOUR)
            } else {
                format!("{}h{}m", s / HOUR, (s % HOUR) / MIN)
            }
        }
        s => {
            if s % DAY == 0 {
                format!("{}d", s / DAY)
            } else {
                format!("{}d{}h", s / DAY, (s % DAY) / HOUR)
            }
        }
    }
}

/// A signed duration: negative ones as `-3h`.
pub fn signed_duration(secs: i64) -> String {
    if secs < 0 {
        format!("-{}", duration(secs.unsigned_abs()))
    } else {
        duration(secs as u64)
    }
}

/// A string cut to `max` characters, with `…` when cut; newlines shown as `⏎`.
pub fn shorten(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { '⏎' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// An optional member of a server's answer, as the commands have always
/// shown one: its value, or `null` when the server left it out (they once
/// printed the answer's JSON values).
pub fn or_null(value: Option<impl Display>) -> String {
    value.map_or_else(|| "null".to_string(), |v| v.to_string())
}

/// A count or time the answers carry as a JSON integer, when it is one a
/// `u64` holds (not negative).
pub fn unsigned(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_columns_and_align_numbers_right() {
        let mut t = Table::new(&["QUEUE", "VISIBLE>"]);
        t.row(vec!["orders-dlq".into(), "3".into()]);
        t.row(vec!["a".into(), "1200".into()]);
        assert_eq!(
            t.render(),
            "QUEUE       VISIBLE\norders-dlq        3\na              1200\n"
        );
    }

    #[test]
    fn durations_read_like_a_person_writes_them() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(90), "1m30s");
        assert_eq!(duration(3600), "1h");
        assert_eq!(duration(12_000), "3h20m");
        assert_eq!(duration(345_600), "4d");
        assert_eq!(duration(180_000), "2d2h");
        assert_eq!(signed_duration(-7200), "-2h");
    }

    #[test]
    fn shorten_cuts_long_text_and_flattens_lines() {
        assert_eq!(shorten("abc", 5), "abc");
        assert_eq!(shorten("abcdefgh", 5), "abcd…");
        assert_eq!(shorten("a\nb", 5), "a⏎b");
    }

    #[test]
    fn absent_members_show_as_null() {
        assert_eq!(or_null(Some(3)), "3");
        assert_eq!(or_null(None::<i64>), "null");
        assert_eq!(unsigned(Some(-1)), None);
        assert_eq!(unsigned(Some(7)), Some(7));
    }
}
