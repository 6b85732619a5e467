//! The text of generated source, a line at a time.

/// Generated source being written.
#[derive(Debug, Default)]
pub struct Out {
    /// The text so far.
    pub text: String,
}

impl Out {
    /// Appends `line` and a newline.
    pub fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }
}
