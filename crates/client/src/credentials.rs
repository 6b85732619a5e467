//! Where a client's credentials and region come from, in the order the AWS
//! SDKs and CLI use: the flags, then a profile named by `--profile`, then
//! the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`), then the profile `AWS_PROFILE` names (or
//! `default`) in the shared files.

use std::fmt;
use std::path::PathBuf;

use clap::Args;

use crate::error::ClientError;
use crate::profile_files::{Profile, SharedFiles};

/// The region signed for when none is configured anywhere.
pub const DEFAULT_REGION: &str = "us-east-1";

/// An access key to sign with.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret; never printed.
    pub secret_access_key: String,
    /// A session token, sent as `X-Amz-Security-Token`.
    pub session_token: Option<String>,
}

impl fmt::Debug for Credentials {
    // The secret and the token stay out of every Debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// What a client signs with: credentials (none: requests go unsigned) and
/// the region of the credential scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signing {
    /// The key, if one was found.
    pub credentials: Option<Credentials>,
    /// The region (it also picks the server's regional queues).
    pub region: String,
}

/// The flags of every command that talks to a server: credentials, region
/// and the CA file of `https://` endpoints.
#[derive(Args, Debug, Clone, Default)]
pub struct ConnectionFlags {
    /// AWS access key id to sign requests with (SigV4); else from AWS_ACCESS_KEY_ID or the profile. Without any key, requests go unsigned.
    #[arg(
        long,
        global = true,
        value_name = "KEY_ID",
        requires = "secret_access_key"
    )]
    pub access_key_id: Option<String>,

    /// The secret of --access-key-id; else from AWS_SECRET_ACCESS_KEY or the profile.
    #[arg(long, global = true, value_name = "SECRET", requires = "access_key_id")]
    pub secret_access_key: Option<String>,

    /// Region to sign for [default: AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1].
    #[arg(long, global = true, value_name = "REGION")]
    pub region: Option<String>,

    /// Profile of ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE) to sign with [default: AWS_PROFILE, else default].
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,

    /// PEM file of CA certificates to trust for https:// endpoints, besides the system's (for a self-signed server).
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
}

impl ConnectionFlags {
    /// The credentials and region, from the flags, the process's
    /// environment and the shared files.
    pub fn signing(&self) -> Result<Signing, ClientError> {
        self.signing_with(&|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// As [`signing`](Self::signing), with `env` for the environment.
    pub fn signing_with(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Signing, ClientError> {
        let files = SharedFiles::locate(env);
        let profile_name = self
            .profile
            .clone()
            .or_else(|| env("AWS_PROFILE"))
            .unwrap_or_else(|| "default".to_string());
        let profile = files.profile(&profile_name).map_err(|e| {
            ClientError::Config(format!("cannot read the AWS profile {profile_name:?}: {e}"))
        })?;
        if self.profile.is_some() && profile.is_none() {
            return Err(ClientError::Config(format!(
                "--profile {profile_name:?}: no such profile in {} or {}",
                shown(&files.credentials),
                shown(&files.config)
            )));
        }
        let from_profile = || from_profile(&profile_name, profile.as_ref());
        let credentials = match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) => Some(Credentials {
                access_key_id: id.clone(),
                secret_access_key: secret.clone(),
                session_token: None,
            }),
            _ if self.profile.is_some() => from_profile()?,
            _ => match from_env(env)? {
                Some(credentials) => Some(credentials),
                None => from_profile()?,
            },
        };
        let region = self
            .region
            .clone()
            .or_else(|| env("AWS_REGION"))
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .or_else(|| profile.as_ref().and_then(|p| p.get("region").cloned()))
            .unwrap_or_else(|| DEFAULT_REGION.to_string());
        Ok(Signing {
            credentials,
            region,
        })
    }
}

fn shown(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map_or_else(|| "(no file)".to_string(), |p| p.display().to_string())
}

fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Credentials>, ClientError> {
    match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        (Some(id), Some(secret)) => Ok(Some(Credentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: env("AWS_SESSION_TOKEN"),
        })),
        (None, None) => Ok(None),
        _ => Err(ClientError::Config(
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together".into(),
        )),
    }
}

fn from_profile(name: &str, profile: Option<&Profile>) -> Result<Option<Credentials>, ClientError> {
    let Some(profile) = profile else {
        return Ok(None);
    };
    match (
        profile.get("aws_access_key_id"),
        profile.get("aws_secret_access_key"),
    ) {
        (Some(id), Some(secret)) => Ok(Some(Credentials {
            access_key_id: id.clone(),
            secret_access_key: secret.clone(),
            session_token: profile.get("aws_session_token").cloned(),
        })),
        (None, None) => Ok(None),
        _ => Err(ClientError::Config(format!(
            "AWS profile {name:?} must set both aws_access_key_id and aws_secret_access_key"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn files() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("credentials"),
            "[default]\naws_access_key_id = DEFAULTKEY\naws_secret_access_key = s1\n\
             [ops]\naws_access_key_id = OPSKEY\naws_secret_access_key = s2\naws_session_token = tok\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("config"),
            "[default]\nregion = eu-west-1\n[profile ops]\nregion = ap-south-1\n",
        )
        .unwrap();
        dir
    }

    fn key(signing: &Signing) -> Option<&str> {
        signing
            .credentials
            .as_ref()
            .map(|c| c.access_key_id.as_str())
    }

    #[test]
    fn flags_then_profile_flag_then_env_then_default_profile() {
        let dir = files();
        let creds = dir.path().join("credentials");
        let config = dir.path().join("config");
        let base = [
            ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ];
        let with_env = [
            base[0],
            base[1],
            ("AWS_ACCESS_KEY_ID", "ENVKEY"),
            ("AWS_SECRET_ACCESS_KEY", "s3"),
            ("AWS_REGION", "us-west-1"),
        ];
        let none = ConnectionFlags::default();
        let s = none.signing_with(&env_of(&base)).unwrap();
        assert_eq!(
            (key(&s), s.region.as_str()),
            (Some("DEFAULTKEY"), "eu-west-1")
        );
        let s = none.signing_with(&env_of(&with_env)).unwrap();
        assert_eq!((key(&s), s.region.as_str()), (Some("ENVKEY"), "us-west-1"));
        let profile = ConnectionFlags {
            profile: Some("ops".into()),
            ..Default::default()
        };
        let s = profile.signing_with(&env_of(&base)).unwrap();
        assert_eq!((key(&s), s.region.as_str()), (Some("OPSKEY"), "ap-south-1"));
        assert_eq!(s.credentials.unwrap().session_token.as_deref(), Some("tok"));
        // An explicit --profile beats the environment's keys.
        let s = profile.signing_with(&env_of(&with_env)).unwrap();
        assert_eq!(key(&s), Some("OPSKEY"));
        let flags = ConnectionFlags {
            access_key_id: Some("FLAGKEY".into()),
            secret_access_key: Some("s4".into()),
            region: Some("sa-east-1".into()),
            profile: Some("ops".into()),
            ca_file: None,
        };
        let s = flags.signing_with(&env_of(&with_env)).unwrap();
        assert_eq!((key(&s), s.region.as_str()), (Some("FLAGKEY"), "sa-east-1"));
    }

    #[test]
    fn nothing_configured_is_unsigned_in_the_default_region() {
        let s = ConnectionFlags::default()
            .signing_with(&env_of(&[("HOME", "/nonexistent")]))
            .unwrap();
        assert_eq!(s.credentials, None);
        assert_eq!(s.region, DEFAULT_REGION);
    }

    #[test]
    fn half_a_key_or_a_missing_profile_is_an_error() {
        let s = ConnectionFlags::default().signing_with(&env_of(&[
            ("HOME", "/nonexistent"),
            ("AWS_ACCESS_KEY_ID", "K"),
        ]));
        assert!(s.unwrap_err().to_string().contains("together"));
        let flags = ConnectionFlags {
            profile: Some("nope".into()),
            ..Default::default()
        };
        let e = flags
            .signing_with(&env_of(&[("HOME", "/nonexistent")]))
            .unwrap_err();
        assert!(e.to_string().contains("no such profile"), "{e}");
    }
}
