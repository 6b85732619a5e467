//! The config file of `sluice serve` read from disk; its keys and checks
//! are `sluice-config`'s.

pub use sluice_config::*;

/// Reads and parses a config file.
pub fn load(path: &std::path::Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
    parse(&text).map_err(|e| anyhow::anyhow!("invalid config file {}: {e}", path.display()))
}
