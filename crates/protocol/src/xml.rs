//! Writing XML text, escaped so that every XML parser reads back the exact
//! string (carriage returns included, which parsers would otherwise fold),
//! and stays well-formed whatever an error message echoes of the input:
//! characters XML 1.0 cannot carry at all (NUL and most C0 controls, which
//! not even a character reference may name) are written as U+FFFD.

/// The XML namespace of Query responses.
pub const XML_NAMESPACE: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// Appends `s` escaped for element content.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            '\u{0}'..='\u{8}'
            | '\u{B}'
            | '\u{C}'
            | '\u{E}'..='\u{1F}'
            | '\u{FFFE}'
            | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// Appends `<name>escaped text</name>`.
pub fn element(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    escape_into(out, text);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Appends `<name>`.
pub fn open(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
}

/// Appends `</name>`.
pub fn close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H4: an error message echoing a NUL or another control character
    /// still makes a document every XML parser accepts.
    #[test]
    fn h4_characters_xml_cannot_carry_are_replaced() {
        let mut out = String::new();
        escape_into(&mut out, "a\u{0}b\u{1b}c\td\ne\u{FFFF}");
        assert_eq!(out, "a\u{FFFD}b\u{FFFD}c\td\ne\u{FFFD}");
    }
}
