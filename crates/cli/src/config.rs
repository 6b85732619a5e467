//! The config file of `sluice serve` read from disk; its keys and checks
//! are `sluice-config`'s.

pub use sluice_config::*;

/// Reads and parses a config file.
pub fn load(path: &std::path::Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
    parse(&text).map_err(|e| anyhow::anyhow!("invalid config file {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ```toml blocks of a document.
    fn toml_blocks(doc: &str) -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        text.split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_string())
            .collect()
    }

    /// The consumer example of docs/consumers.md parses, with its values.
    #[test]
    fn documented_consumer_example_parses() {
        let blocks = toml_blocks("docs/consumers.md");
        let c: FileConfig = toml::from_str(&blocks[0]).unwrap();
        let spec = c.consumers[0].spec();
        assert_eq!(
            (
                spec.batch_size,
                spec.max_concurrency,
                spec.timeout.as_secs()
            ),
            (10, 2, 30)
        );
        assert!(spec.report_batch_item_failures);
        assert!(
            toml::from_str::<FileConfig>(
                "[[consumers]]\nname = \"a\"\nqueue = \"q\"\nurl = \"u\"\nbatchsize = 2\n"
            )
            .is_err()
        );
    }
}
