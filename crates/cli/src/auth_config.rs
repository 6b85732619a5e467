//! `sluice serve`'s authentication settings: the `[auth]` table and the
//! `--auth` / `--allow-anonymous` flags, and the rule that a server others
//! can reach is not anonymous by accident (docs/security.md).

use std::net::SocketAddr;
use std::sync::Arc;

use sluice_server::auth::{Access, Authenticator, Credential, PreparedKeys, RateLimit};

use crate::config::{AuthMode, FileConfig};

/// The verifier `sluice serve` runs with (`None`: authentication off), or
/// why it must not start: SigV4 without credentials, a bad credential, or
/// a non-loopback address without authentication and without
/// `--allow-anonymous`.
pub fn auth_settings(
    flag_mode: Option<AuthMode>,
    flag_allow_anonymous: bool,
    file: &FileConfig,
    bind: SocketAddr,
    default_account: &str,
) -> anyhow::Result<Option<Arc<Authenticator>>> {
    let table = file.auth.as_ref();
    let mode = flag_mode
        .or(table.and_then(|t| t.mode))
        .unwrap_or(AuthMode::Off);
    let declared = table.map_or(&[][..], |t| &t.credentials[..]);
    match mode {
        AuthMode::Sigv4 => {
            let credentials = credentials(file, default_account)?;
            let auth = Authenticator::new(credentials)
                .map_err(|e| anyhow::anyhow!("{e} (see docs/security.md)"))?;
            tracing::info!(
                access_keys = auth.len(),
                "authentication: every request must be SigV4-signed by a configured key"
            );
            Ok(Some(Arc::new(auth)))
        }
        AuthMode::Off => {
            let allow = flag_allow_anonymous || table.and_then(|t| t.allow_anonymous) == Some(true);
            if !bind.ip().is_loopback() {
                anyhow::ensure!(
                    allow,
                    "refusing to listen on {bind} without authentication: anyone who can reach \
                     it could read, send and delete every message. Turn SigV4 on (--auth sigv4, \
                     or [auth] mode = \"sigv4\", with [[auth.credentials]] in the config file), \
                     listen on a loopback address, or pass --allow-anonymous \
                     (auth.allow_anonymous = true) to serve anonymously on purpose. \
                     See docs/security.md."
                );
                tracing::warn!(
                    address = %bind,
                    "authentication is off on a non-loopback address (allow_anonymous): \
                     any client that reaches it is served"
                );
            }
            if !declared.is_empty() {
                tracing::warn!(
                    "[[auth.credentials]] are configured but authentication is off: \
                     they are not checked (set auth.mode = \"sigv4\" or --auth sigv4)"
                );
            }
            Ok(None)
        }
    }
}

/// `[auth] organization_id`, checked to be an AWS Organizations id
/// (`o-` and 10–32 lowercase letters or digits).
pub fn organization_id(file: &FileConfig) -> anyhow::Result<Option<String>> {
    let Some(id) = file.auth.as_ref().and_then(|t| t.organization_id.clone()) else {
        return Ok(None);
    };
    let body = id.strip_prefix("o-").unwrap_or_default();
    anyhow::ensure!(
        (10..=32).contains(&body.len())
            && body
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        "[auth] organization_id must look like o-a1b2c3d4e5 (o- and 10 to 32 lowercase \
         letters or digits), got {id:?}"
    );
    Ok(Some(id))
}

/// The `[[auth.credentials]]` of `file`, their accounts filled in.
fn credentials(file: &FileConfig, default_account: &str) -> anyhow::Result<Vec<Credential>> {
    let table = file.auth.as_ref();
    let declared = table.map_or(&[][..], |t| &t.credentials[..]);
    let default_rate = table.and_then(|t| t.default_rate_limit);
    let default_burst = table.and_then(|t| t.default_burst);
    anyhow::ensure!(
        default_burst.is_none() || default_rate.is_some(),
        "[auth] default_burst needs default_rate_limit"
    );
    let mut credentials = Vec::with_capacity(declared.len());
    for c in declared {
        let account_id = c.account_id.as_deref().unwrap_or(default_account);
        anyhow::ensure!(
            account_id.len() == 12 && account_id.bytes().all(|b| b.is_ascii_digit()),
            "[[auth.credentials]] {}: account_id must be 12 digits, got {account_id:?}",
            c.access_key_id
        );
        credentials.push(Credential {
            access_key_id: c.access_key_id.clone(),
            secret_access_key: c.secret_access_key.clone(),
            session_token: c.session_token.clone(),
            account_id: account_id.to_string(),
            access: Arc::new(Access {
                allow: c.allow.clone(),
                queues: c.queues.clone(),
            }),
            rate_limit: rate_limit(c, default_rate, default_burst)?,
        });
    }
    Ok(credentials)
}

/// A key's rate (rule A8): its own `rate_limit` and `burst`, else the
/// `[auth]` defaults; a burst is one second's worth unless given.
fn rate_limit(
    c: &crate::config::CredentialDecl,
    default_rate: Option<u32>,
    default_burst: Option<u32>,
) -> anyhow::Result<Option<RateLimit>> {
    let (per_second, burst) = match c.rate_limit {
        Some(rate) => (rate, c.burst),
        None => {
            anyhow::ensure!(
                c.burst.is_none() || default_rate.is_some(),
                "[[auth.credentials]] {}: burst needs a rate_limit",
                c.access_key_id
            );
            match default_rate {
                Some(rate) => (rate, c.burst.or(default_burst)),
                None => return Ok(None),
            }
        }
    };
    Ok(Some(RateLimit {
        per_second,
        burst: burst.unwrap_or(per_second),
    }))
}

/// The credentials of `file` for `auth` (a reload, rule A11), checked as at
/// start-up and not yet in use ([`Authenticator::install`] puts them in
/// use). The mode is not reloaded: changing it needs a restart.
pub fn reload_credentials(
    auth: &Authenticator,
    file: &FileConfig,
    default_account: &str,
) -> anyhow::Result<PreparedKeys> {
    if file.auth.as_ref().and_then(|t| t.mode) == Some(AuthMode::Off) {
        tracing::warn!("auth.mode changed to off: a restart is needed to turn authentication off");
    }
    auth.prepare(credentials(file, default_account)?)
        .map_err(|e| anyhow::anyhow!("{e} (see docs/security.md)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(toml: &str) -> FileConfig {
        toml::from_str(toml).unwrap()
    }

    /// A6: `[auth] organization_id` is taken only in AWS Organizations'
    /// form, so a typo fails the start instead of matching nothing.
    #[test]
    fn a6_organization_id_is_checked() {
        let with = |id: &str| file(&format!("[auth]\norganization_id = \"{id}\"\n"));
        assert_eq!(
            organization_id(&with("o-a1b2c3d4e5")).unwrap(),
            Some("o-a1b2c3d4e5".to_string())
        );
        for bad in ["a1b2c3d4e5", "o-short", "o-UPPERCASE12", "o-a1b2c3d4e5!"] {
            assert!(organization_id(&with(bad)).is_err(), "{bad}");
        }
        assert_eq!(organization_id(&file("")).unwrap(), None);
    }

    const LOOPBACK: &str = "127.0.0.1:9324";
    const PUBLIC: &str = "0.0.0.0:9324";

    /// A4: off by default and on loopback; a public address without
    /// authentication is refused unless anonymous access is asked for.
    #[test]
    fn a4_public_addresses_need_auth_or_allow_anonymous() {
        let empty = FileConfig::default();
        let acct = "000000000000";
        assert!(
            auth_settings(None, false, &empty, LOOPBACK.parse().unwrap(), acct)
                .unwrap()
                .is_none()
        );
        let e = auth_settings(None, false, &empty, PUBLIC.parse().unwrap(), acct).unwrap_err();
        assert!(e.to_string().contains("--allow-anonymous"), "{e}");
        assert!(
            auth_settings(None, true, &empty, PUBLIC.parse().unwrap(), acct)
                .unwrap()
                .is_none()
        );
        let allowed = file("[auth]\nallow_anonymous = true\n");
        assert!(auth_settings(None, false, &allowed, PUBLIC.parse().unwrap(), acct).is_ok());
        assert!(auth_settings(None, false, &allowed, "[::]:1".parse().unwrap(), acct).is_ok());
    }

    /// The auth examples of docs/security.md parse and start a server
    /// (on a public address: the first requires SigV4, the second allows
    /// anonymous access).
    #[test]
    fn a4_documented_auth_examples_work() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let blocks: Vec<&str> = doc
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 2, "{blocks:?}");
        let public = PUBLIC.parse().unwrap();
        let keys = auth_settings(None, false, &file(blocks[0]), public, "000000000000");
        assert_eq!(keys.unwrap().map(|a| a.len()), Some(2));
        let anonymous = auth_settings(None, false, &file(blocks[1]), public, "000000000000");
        assert!(anonymous.unwrap().is_none());
    }

    /// A2: `allow` and `queues` patterns reach the credential; a pattern
    /// that is not an action pattern stops the server.
    #[test]
    fn a2_credential_rules() {
        let public = PUBLIC.parse().unwrap();
        let limited = file(
            "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"AKID\"\n\
             secret_access_key = \"s\"\nallow = [\"sqs:Receive*\"]\nqueues = [\"orders*\"]\n",
        );
        assert!(
            auth_settings(None, false, &limited, public, "000000000000")
                .unwrap()
                .is_some()
        );
        let bad = file(
            "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"AKID\"\n\
             secret_access_key = \"s\"\nallow = [\"ReceiveMessage\"]\n",
        );
        let e = auth_settings(None, false, &bad, public, "000000000000").unwrap_err();
        assert!(e.to_string().contains("allow pattern"), "{e}");
    }

    /// A8: a key's own rate, the `[auth]` default, or none; a zero rate
    /// and a burst without a rate stop the server.
    #[test]
    fn a8_rate_limits_reach_the_credentials() {
        let acct = "000000000000";
        let toml = "[auth]\nmode = \"sigv4\"\ndefault_rate_limit = 50\n\
                    [[auth.credentials]]\naccess_key_id = \"OWN\"\nsecret_access_key = \"s\"\n\
                    rate_limit = 5\nburst = 20\n\
                    [[auth.credentials]]\naccess_key_id = \"DEFAULT\"\nsecret_access_key = \"s\"\n";
        let creds = credentials(&file(toml), acct).unwrap();
        assert_eq!(
            creds[0].rate_limit,
            Some(RateLimit {
                per_second: 5,
                burst: 20
            })
        );
        assert_eq!(
            creds[1].rate_limit,
            Some(RateLimit {
                per_second: 50,
                burst: 50
            })
        );
        let unlimited = "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\n\
                         access_key_id = \"K\"\nsecret_access_key = \"s\"\n";
        assert_eq!(
            credentials(&file(unlimited), acct).unwrap()[0].rate_limit,
            None
        );
        let public = PUBLIC.parse().unwrap();
        let zero = format!("{unlimited}rate_limit = 0\n");
        let e = auth_settings(None, false, &file(&zero), public, acct).unwrap_err();
        assert!(e.to_string().contains("rate_limit"), "{e}");
        let lone_burst = format!("{unlimited}burst = 3\n");
        let e = auth_settings(None, false, &file(&lone_burst), public, acct).unwrap_err();
        assert!(e.to_string().contains("burst needs a rate_limit"), "{e}");
    }

    /// A4: SigV4 needs credentials; the flag overrides the file's mode.
    #[test]
    fn a4_sigv4_needs_credentials() {
        let acct = "000000000000";
        let public = PUBLIC.parse().unwrap();
        let none = FileConfig::default();
        assert!(auth_settings(Some(AuthMode::Sigv4), false, &none, public, acct).is_err());
        let keys = file(
            "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"AKID\"\n\
             secret_access_key = \"s\"\n[[auth.credentials]]\naccess_key_id = \"AKID2\"\n\
             secret_access_key = \"t\"\nsession_token = \"tok\"\naccount_id = \"123456789012\"\n",
        );
        let auth = auth_settings(None, false, &keys, public, acct)
            .unwrap()
            .unwrap();
        assert_eq!(auth.len(), 2);
        assert!(auth_settings(Some(AuthMode::Off), false, &keys, public, acct).is_err());
        let bad = file(
            "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"AKID\"\n\
             secret_access_key = \"s\"\naccount_id = \"12\"\n",
        );
        assert!(auth_settings(None, false, &bad, public, acct).is_err());
        assert!(toml::from_str::<FileConfig>("[auth]\nmode = \"sigv2\"\n").is_err());
        assert!(toml::from_str::<FileConfig>("[auth]\nmodes = \"sigv4\"\n").is_err());
    }
}
