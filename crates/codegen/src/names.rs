//! Rust names and doc lines made from model names and HTML documentation.

/// `MD5OfBody` → `md5_of_body`, `QueueOwnerAWSAccountId` →
/// `queue_owner_aws_account_id`; a Rust keyword gets a trailing `_`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let starts_word = match prev {
                None => false,
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                Some(_) => false,
            };
            if starts_word && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// A type name from a shape name: its first letter in upper case.
pub fn type_name(shape: &str) -> String {
    let mut chars = shape.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
    "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The first sentence of HTML documentation as plain text, for a doc
/// line; `None` when there is none.
pub fn doc_line(html: Option<&str>) -> Option<String> {
    let html = html?;
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut line = String::new();
    for word in words {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        if word.ends_with('.') && line.len() > 20 {
            break;
        }
        if line.len() > 240 {
            line.push('…');
            break;
        }
    }
    // Punctuation the HTML tags left detached: `queue .` → `queue.`
    let line = line
        .replace(" .", ".")
        .replace(" ,", ",")
        .replace("( ", "(");
    (!line.is_empty()).then(|| escape_doc(&line))
}

/// Text made safe for a `///` line: brackets that rustdoc would read as
/// links are escaped.
fn escape_doc(text: &str) -> String {
    text.replace('[', "\\[").replace(']', "\\]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_of_model_names() {
        assert_eq!(snake_case("MD5OfBody"), "md5_of_body");
        assert_eq!(
            snake_case("MD5OfMessageAttributes"),
            "md5_of_message_attributes"
        );
        assert_eq!(
            snake_case("QueueOwnerAWSAccountId"),
            "queue_owner_aws_account_id"
        );
        assert_eq!(snake_case("AWSAccountIds"), "aws_account_ids");
        assert_eq!(snake_case("QueueUrl"), "queue_url");
        assert_eq!(snake_case("Type"), "type_");
        assert_eq!(snake_case("message"), "message");
        assert_eq!(snake_case("TopicARN"), "topic_arn");
        assert_eq!(
            snake_case("SMSSandboxPhoneNumber"),
            "sms_sandbox_phone_number"
        );
    }

    #[test]
    fn doc_lines_are_first_sentences_in_plain_text() {
        assert_eq!(
            doc_line(Some("<p>Deletes the queue specified by the <code>QueueUrl</code>, regardless of the queue's contents.</p> <p>More.</p>")).as_deref(),
            Some("Deletes the queue specified by the QueueUrl, regardless of the queue's contents.")
        );
        assert_eq!(doc_line(Some("<p></p>")), None);
        assert_eq!(doc_line(None), None);
    }
}
