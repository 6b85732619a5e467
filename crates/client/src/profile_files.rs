//! AWS's shared files, `~/.aws/credentials` and `~/.aws/config`: INI
//! sections of `key = value` lines. Only what signing needs is read (keys,
//! token, region); other settings (SSO, roles, processes) are ignored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The `key = value` settings of one profile.
pub type Profile = HashMap<String, String>;

/// The sections of an INI text, by name (`[default]`, `[profile x]`, `[x]`),
/// keys in lower case; comments (`#`, `;`) and indented continuation lines
/// (nested settings such as `s3 =` blocks) skipped.
pub fn parse_ini(text: &str) -> HashMap<String, Profile> {
    let mut sections: HashMap<String, Profile> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            sections.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(section), Some((key, value))) = (&current, line.split_once('='))
            && let Some(profile) = sections.get_mut(section)
        {
            profile.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    sections
}

/// The files to read, as the SDKs find them: `AWS_SHARED_CREDENTIALS_FILE`
/// and `AWS_CONFIG_FILE`, else `~/.aws/credentials` and `~/.aws/config`.
#[derive(Debug, Clone)]
pub struct SharedFiles {
    /// The credentials file.
    pub credentials: Option<PathBuf>,
    /// The config file.
    pub config: Option<PathBuf>,
}

impl SharedFiles {
    /// The files named by `env` (a variable's value by name).
    pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let home = env("HOME").map(PathBuf::from);
        let under_home = |name: &str| home.as_ref().map(|h| h.join(".aws").join(name));
        Self {
            credentials: env("AWS_SHARED_CREDENTIALS_FILE")
                .map(PathBuf::from)
                .or_else(|| under_home("credentials")),
            config: env("AWS_CONFIG_FILE")
                .map(PathBuf::from)
                .or_else(|| under_home("config")),
        }
    }

    /// Profile `name`'s settings from both files; the credentials file's
    /// win. `None` when neither file has the profile.
    pub fn profile(&self, name: &str) -> Result<Option<Profile>, std::io::Error> {
        let from_config = match &self.config {
            Some(path) => read(path)?.and_then(|mut sections| {
                // The config file names profiles `[profile x]`, except `[default]`.
                sections
                    .remove(&format!("profile {name}"))
                    .or_else(|| (name == "default").then(|| sections.remove(name)).flatten())
            }),
            None => None,
        };
        let from_credentials = match &self.credentials {
            Some(path) => read(path)?.and_then(|mut sections| sections.remove(name)),
            None => None,
        };
        Ok(match (from_config, from_credentials) {
            (None, None) => None,
            (config, credentials) => {
                let mut merged = config.unwrap_or_default();
                merged.extend(credentials.unwrap_or_default());
                Some(merged)
            }
        })
    }
}

/// The sections of the file at `path`, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<HashMap<String, Profile>>, std::io::Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(parse_ini(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_keys_and_comments() {
        let text = "# comment\n[default]\naws_access_key_id = AKID\n; other\n\
                    AWS_Secret_Access_Key=secret = with equals\n\n[profile dev]\nregion = eu-west-1\n\
                    s3 =\n  max_concurrent_requests = 20\n";
        let sections = parse_ini(text);
        assert_eq!(sections["default"]["aws_access_key_id"], "AKID");
        assert_eq!(
            sections["default"]["aws_secret_access_key"],
            "secret = with equals"
        );
        assert_eq!(sections["profile dev"]["region"], "eu-west-1");
        assert!(!sections["profile dev"].contains_key("max_concurrent_requests"));
    }

    #[test]
    fn the_credentials_file_wins_over_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(&credentials, "[dev]\naws_access_key_id = FROMCREDS\n").unwrap();
        std::fs::write(
            &config,
            "[profile dev]\naws_access_key_id = FROMCONFIG\nregion = eu-west-1\n[default]\nregion = us-west-2\n",
        )
        .unwrap();
        let files = SharedFiles {
            credentials: Some(credentials),
            config: Some(config),
        };
        let dev = files.profile("dev").unwrap().unwrap();
        assert_eq!(dev["aws_access_key_id"], "FROMCREDS");
        assert_eq!(dev["region"], "eu-west-1");
        assert_eq!(
            files.profile("default").unwrap().unwrap()["region"],
            "us-west-2"
        );
        assert!(files.profile("missing").unwrap().is_none());
    }
}
