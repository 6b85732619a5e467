//! What Jackson, the JSON parser behind SNS, says about text that is not
//! JSON: [`syntax_error`] finds the first error in such a text the way
//! Jackson's `ReaderBasedJsonParser` reads it and words it as Jackson does.
//!
//! Two of these messages are recorded from AWS (recorded-cases.md 51 and
//! 67: `Unrecognized token 'invalid': …` and `Unexpected character ('i'
//! (code 105)): was expecting double-quote to start field name`); the rest
//! follow Jackson 2's wording and are not recorded. Locations inside a
//! message use the form newer AWS answers show (`[Source: REDACTED …]`).
//! The scanner is iterative, so deeply nested input cannot overflow the
//! stack, and it only runs once `serde_json` has refused the text.

/// What Jackson says it expected where a value could not start.
const VALUE_LIST: &str = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')";

/// Jackson cuts an unrecognized token in its message at this many characters.
const MAX_TOKEN: usize = 256;

/// The message Jackson gives for the first syntax error in `text`, or
/// `None` when the scanner finds none (input serde_json refuses for other
/// reasons: nesting deeper than its limit, lone surrogates, numbers out of
/// range). Content after the first complete value is not read, as Jackson's
/// `readTree` does not read it.
pub(super) fn syntax_error(text: &str) -> Option<String> {
    let mut scanner = Scanner {
        chars: text.chars().collect(),
        at: 0,
        open: Vec::new(),
    };
    scanner.scan().err()
}

/// An array or an object being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Array,
    Object,
}

impl Container {
    /// Jackson's name for the context (`typeDesc()`).
    fn desc(self) -> &'static str {
        match self {
            Self::Array => "Array",
            Self::Object => "Object",
        }
    }

    fn closer(self) -> char {
        match self {
            Self::Array => ']',
            Self::Object => '}',
        }
    }
}

/// What the scanner reads next.
#[derive(Clone, Copy)]
enum Expect {
    /// The root value.
    Root,
    /// The first element of an array, or its end.
    FirstElement,
    /// An element after a comma.
    Element,
    /// The first name of an object, or its end.
    FirstName,
    /// A name after a comma.
    Name,
    /// The colon after a name.
    Colon,
    /// A member's value after the colon.
    MemberValue,
    /// A comma or the end of the enclosing container.
    AfterValue,
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    /// The open containers with the index of their opening character.
    open: Vec<(Container, usize)>,
}

impl Scanner {
    fn scan(&mut self) -> Result<(), String> {
        let mut expect = Expect::Root;
        loop {
            expect = match expect {
                Expect::Root => match self.next_non_ws()? {
                    Some(c) => self.value(c)?,
                    None => return Err("No content to map due to end-of-input".to_string()),
                },
                Expect::FirstElement => match self.next_non_ws()? {
                    Some(']') => self.close(']')?,
                    Some('}') => self.close('}')?,
                    Some(c) => self.value(c)?,
                    None => return Err(self.eof_in_container()),
                },
                Expect::Element | Expect::MemberValue => match self.next_non_ws()? {
                    Some(c) => self.value(c)?,
                    None => return Err(self.eof_between_entries()),
                },
                Expect::FirstName | Expect::Name => {
                    let first = matches!(expect, Expect::FirstName);
                    match self.next_non_ws()? {
                        Some('"') => {
                            self.string(true)?;
                            Expect::Colon
                        }
                        Some(c @ ('}' | ']')) if first => self.close(c)?,
                        Some(c) => {
                            return Err(unexpected(
                                c,
                                "was expecting double-quote to start field name",
                            ));
                        }
                        None if first => return Err(self.eof_in_container()),
                        None => return Err(self.eof_between_entries()),
                    }
                }
                Expect::Colon => match self.next_non_ws()? {
                    Some(':') => Expect::MemberValue,
                    Some(c) => {
                        return Err(unexpected(
                            c,
                            "was expecting a colon to separate field name and value",
                        ));
                    }
                    None => return Err(self.eof_between_entries()),
                },
                Expect::AfterValue => {
                    let Some(&(container, _)) = self.open.last() else {
                        // Jackson's readTree stops after the root value.
                        return Ok(());
                    };
                    match self.next_non_ws()? {
                        Some(c @ (']' | '}')) => self.close(c)?,
                        Some(',') => match container {
                            Container::Array => Expect::Element,
                            Container::Object => Expect::Name,
                        },
                        Some(c) => {
                            let comment = format!(
                                "was expecting comma to separate {} entries",
                                container.desc()
                            );
                            return Err(unexpected(c, &comment));
                        }
                        None => return Err(self.eof_in_container()),
                    }
                }
            };
        }
    }

    /// Reads the value that starts with `c` (already consumed).
    fn value(&mut self, c: char) -> Result<Expect, String> {
        match c {
            '{' => {
                self.open.push((Container::Object, self.at - 1));
                Ok(Expect::FirstName)
            }
            '[' => {
                self.open.push((Container::Array, self.at - 1));
                Ok(Expect::FirstElement)
            }
            '"' => {
                self.string(false)?;
                Ok(Expect::AfterValue)
            }
            '-' | '0'..='9' => {
                self.number(c)?;
                Ok(Expect::AfterValue)
            }
            't' => self.keyword("true"),
            'f' => self.keyword("false"),
            'n' => self.keyword("null"),
            '}' => Err(unexpected(c, "expected a value")),
            c if is_identifier_start(c) => Err(self.unrecognized(c.to_string())),
            c => Err(unexpected(
                c,
                &format!("expected a valid value {VALUE_LIST}"),
            )),
        }
    }

    /// Reads the rest of `word`, whose first character is consumed.
    fn keyword(&mut self, word: &str) -> Result<Expect, String> {
        for (i, expected) in word.chars().enumerate().skip(1) {
            if self.peek() != Some(expected) {
                return Err(self.unrecognized(word.chars().take(i).collect()));
            }
            self.at += 1;
        }
        // Jackson checks the character after a keyword only from '0' up.
        match self.peek() {
            Some(c) if c >= '0' && c != ']' && c != '}' && is_identifier_part(c) => {
                Err(self.unrecognized(word.to_string()))
            }
            _ => Ok(Expect::AfterValue),
        }
    }

    /// `Unrecognized token '<matched + the identifier characters that follow>'`.
    fn unrecognized(&mut self, matched: String) -> String {
        let mut token = matched;
        while let Some(c) = self.peek() {
            if !is_identifier_part(c) {
                break;
            }
            self.at += 1;
            token.push(c);
            if token.chars().count() >= MAX_TOKEN {
                token.push_str("...");
                break;
            }
        }
        format!("Unrecognized token '{token}': was expecting {VALUE_LIST}")
    }

    /// Reads a string or a name whose opening quote is consumed.
    fn string(&mut self, name: bool) -> Result<(), String> {
        loop {
            let Some(c) = self.bump() else {
                return Err(if name {
                    "Unexpected end-of-input in field name".to_string()
                } else {
                    "Unexpected end-of-input: was expecting closing quote for a string value"
                        .to_string()
                });
            };
            match c {
                '"' => return Ok(()),
                '\\' => self.escape()?,
                c if c < ' ' => {
                    let context = if name { "name" } else { "string value" };
                    return Err(format!(
                        "Illegal unquoted character ({}): has to be escaped using backslash to be included in {context}",
                        char_desc(c)
                    ));
                }
                _ => {}
            }
        }
    }

    fn escape(&mut self) -> Result<(), String> {
        const EOF: &str = "Unexpected end-of-input in character escape sequence";
        match self.bump() {
            None => Err(EOF.to_string()),
            Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => Ok(()),
            Some('u') => {
                for _ in 0..4 {
                    match self.bump() {
                        None => return Err(EOF.to_string()),
                        Some(h) if h.is_ascii_hexdigit() => {}
                        Some(h) => {
                            return Err(unexpected(
                                h,
                                "expected a hex-digit for character escape sequence",
                            ));
                        }
                    }
                }
                Ok(())
            }
            Some(c) => Err(format!("Unrecognized character escape {}", char_desc(c))),
        }
    }

    /// Reads a number whose first character (`-` or a digit) is consumed.
    fn number(&mut self, first: char) -> Result<(), String> {
        const EOF: &str = "Unexpected end-of-input in a Number value";
        let mut digit = first;
        if first == '-' {
            match self.bump() {
                Some(d) if d.is_ascii_digit() => digit = d,
                Some(c) => {
                    return Err(unexpected_in_number(
                        c,
                        "expected digit (0-9) to follow minus sign, for valid numeric value",
                    ));
                }
                None => return Err(EOF.to_string()),
            }
        }
        if digit == '0' && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err("Invalid numeric value: Leading zeroes not allowed".to_string());
        }
        self.digits();
        if self.peek() == Some('.') {
            self.at += 1;
            match self.peek() {
                Some(d) if d.is_ascii_digit() => self.digits(),
                Some(c) => {
                    return Err(unexpected_in_number(
                        c,
                        "Decimal point not followed by a digit",
                    ));
                }
                None => return Err(EOF.to_string()),
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.at += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.at += 1;
            }
            match self.peek() {
                Some(d) if d.is_ascii_digit() => self.digits(),
                Some(c) => {
                    return Err(unexpected_in_number(
                        c,
                        "Exponent indicator not followed by a digit",
                    ));
                }
                None => return Err(EOF.to_string()),
            }
        }
        match self.peek() {
            Some(c) if self.open.is_empty() && !matches!(c, ' ' | '\t' | '\n' | '\r') => {
                Err(unexpected(c, "Expected space separating root-level values"))
            }
            _ => Ok(()),
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// Closes the innermost container with `c`, which must be its closer.
    fn close(&mut self, c: char) -> Result<Expect, String> {
        match self.open.last() {
            Some(&(container, _)) if container.closer() == c => {
                self.open.pop();
                Ok(Expect::AfterValue)
            }
            Some(&(container, start)) => Err(format!(
                "Unexpected close marker '{c}': expected '{}' (for {} starting at {})",
                container.closer(),
                container.desc(),
                self.location(start)
            )),
            None => Err(unexpected(c, "expected a value")),
        }
    }

    fn eof_in_container(&self) -> String {
        match self.open.last() {
            Some(&(container, start)) => format!(
                "Unexpected end-of-input: expected close marker for {} (start marker at {})",
                container.desc(),
                self.location(start)
            ),
            None => "No content to map due to end-of-input".to_string(),
        }
    }

    fn eof_between_entries(&self) -> String {
        let desc = self.open.last().map_or("root", |&(c, _)| c.desc());
        format!("Unexpected end-of-input within/between {desc} entries")
    }

    /// Jackson's location of the character at `index`, as newer AWS answers
    /// print it (the source itself redacted).
    fn location(&self, index: usize) -> String {
        let before = &self.chars[..index];
        let line = 1 + before.iter().filter(|&&c| c == '\n').count();
        let column = index - before.iter().rposition(|&c| c == '\n').map_or(0, |p| p + 1) + 1;
        format!(
            "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}]"
        )
    }

    /// The next character that is not white space, consumed; control
    /// characters other than `\t`, `\n` and `\r` are an error.
    fn next_non_ws(&mut self) -> Result<Option<char>, String> {
        while let Some(c) = self.bump() {
            match c {
                ' ' | '\t' | '\n' | '\r' => {}
                c if c < ' ' => {
                    return Err(format!(
                        "Illegal character ({}): only regular white space (\\r, \\n, \\t) is allowed between tokens",
                        char_desc(c)
                    ));
                }
                c => return Ok(Some(c)),
            }
        }
        Ok(None)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }
}

/// `Unexpected character (<desc>): <comment>`.
fn unexpected(c: char, comment: &str) -> String {
    format!("Unexpected character ({}): {comment}", char_desc(c))
}

/// `Unexpected character (<desc>) in numeric value: <comment>`.
fn unexpected_in_number(c: char, comment: &str) -> String {
    format!(
        "Unexpected character ({}) in numeric value: {comment}",
        char_desc(c)
    )
}

/// Jackson's description of a character: `'i' (code 105)`, `(CTRL-CHAR,
/// code 10)`, or `'é' (code 233)`; above 255 the hex code is added.
fn char_desc(c: char) -> String {
    let code = u32::from(c);
    if code < 0x20 || (0x7f..=0x9f).contains(&code) {
        format!("(CTRL-CHAR, code {code})")
    } else if code > 255 {
        format!("'{c}' (code {code} / 0x{code:x})")
    } else {
        format!("'{c}' (code {code})")
    }
}

/// Java's `Character.isJavaIdentifierStart`, near enough for messages.
fn is_identifier_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

/// Java's `Character.isJavaIdentifierPart`, near enough for messages.
fn is_identifier_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}
