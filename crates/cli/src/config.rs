//! The TOML configuration file of `sluice serve`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// Everything `sluice serve` can be told in its config file. Command-line
/// flags override the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Address to listen on, e.g. `127.0.0.1:9324`.
    pub bind: Option<SocketAddr>,
    /// Directory of the durable store.
    pub data_dir: Option<PathBuf>,
    /// Keep everything in memory (not durable).
    pub in_memory: Option<bool>,
    /// PostgreSQL URL: store everything there, shared by several nodes.
    pub postgres: Option<String>,
    /// Most PostgreSQL connections for requests.
    pub postgres_pool_size: Option<usize>,
    /// 12-digit account id in queue URLs and ARNs.
    pub account_id: Option<String>,
    /// Region in ARNs.
    pub region: Option<String>,
    /// Public base URL of queue URLs, e.g. `https://sqs.example.com`.
    pub base_url: Option<String>,
    /// Queues to create at start-up.
    #[serde(default)]
    pub queues: Vec<QueueDecl>,
}

/// A queue declared in the config file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDecl {
    /// Queue name.
    pub name: String,
    /// SQS attributes, e.g. `VisibilityTimeout = "60"`.
    #[serde(default)]
    pub attributes: BTreeMap<String, toml::Value>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl QueueDecl {
    /// Attributes as SQS strings (TOML numbers and booleans are accepted).
    pub fn attribute_strings(&self) -> BTreeMap<String, String> {
        self.attributes
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect()
    }
}

/// Reads and parses a config file.
pub fn load(path: &std::path::Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
    toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("invalid config file {}: {e}", path.display()))
}
