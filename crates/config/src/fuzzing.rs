//! The config file parser's entry point for the fuzz target `config_file`
//! (fuzz/): any bytes as a config file, parsed, and what parsed through
//! the checks that need nothing but the file. A refusal is fine; a panic
//! is a bug.

use crate::{FileConfig, checkpoint_interval, parse};

/// Parses `data` as a config file and checks what parsed.
pub fn config_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = parse(text) else {
        return;
    };
    check(&file);
}

fn check(file: &FileConfig) {
    let _ = file.max_long_polls(None);
    let _ = file.encryption_key_file();
    let _ = checkpoint_interval(
        file.checkpoint_interval_ms,
        std::time::Duration::from_secs(1),
    );
    for queue in &file.queues {
        let _ = queue.attribute_strings();
    }
    for consumer in &file.consumers {
        let _ = consumer.spec();
    }
    // Debug prints of a config (start-up errors) must not fail either.
    let _ = format!("{file:?}");
}
