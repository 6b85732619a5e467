//! The signals `sluice serve` answers: SIGTERM and Ctrl-C stop it; SIGHUP
//! reloads its TLS certificate and key and its `[auth]` credentials from
//! their files without dropping a connection or a request (rule A11), and
//! its encryption keyring, re-wrapping the data keys of the server's key
//! by the new active key (rule E5).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use sluice_broker::{EngineError, Rekey};
use sluice_keyring::Keyring;

use sluice_server::auth::Authenticator;
use sluice_server::http::ServerTls;
use sluice_server::http::tls::{self, ServerConfig};

use crate::config;
use crate::tls_config::{self, TlsFiles};

/// What a reload reads again and where it puts it.
pub struct Reloader {
    /// The config file, when the server was started with one.
    pub config_path: Option<PathBuf>,
    /// `--tls-cert` and `--tls-key`: they win over the file's, as at start.
    pub flag_tls: (Option<PathBuf>, Option<PathBuf>),
    /// The certificate the HTTPS listener serves (`None`: no TLS).
    pub tls: Option<Arc<ServerTls>>,
    /// The credentials checked (`None`: authentication off).
    pub auth: Option<Arc<Authenticator>>,
    /// The server's account, of credentials that name none.
    pub default_account: String,
    /// `--encryption-key-file`: it wins over the file's `[encryption]
    /// key_file`, as at start.
    pub flag_keyring: Option<PathBuf>,
    /// Puts a keyring read again in use in the engine; `None` when the
    /// keyring in use did not come from a file (none, the environment's
    /// key, or in memory): a reload then leaves encryption as it is.
    pub rekey: Option<Rekeyer>,
}

/// What puts a new keyring in use in the engine.
pub type Rekeyer = Box<
    dyn Fn(Arc<Keyring>) -> Pin<Box<dyn Future<Output = Result<Rekey, EngineError>> + Send>>
        + Send
        + Sync,
>;

impl Reloader {
    /// Reads everything again and, only if all of it is good, puts it in
    /// use: a bad file changes nothing. New connections get the new
    /// certificate and new requests the new credentials; those in
    /// progress finish with the old. The keyring is put in use after
    /// everything else was checked: an engine refusing it (stored data
    /// needs a key it lacks) stops the reload before anything changed.
    pub async fn reload(&self) -> anyhow::Result<()> {
        let file = match &self.config_path {
            Some(path) => config::load(path)?,
            None => config::FileConfig::default(),
        };
        let (flag_cert, flag_key) = (&self.flag_tls.0, &self.flag_tls.1);
        let files = tls_config::tls_files(flag_cert.as_deref(), flag_key.as_deref(), &file)?;
        let new_tls = match (&self.tls, files) {
            (Some(_), Some(files)) => Some(server_config(&files)?),
            (Some(_), None) => anyhow::bail!(
                "the config file no longer names a TLS certificate and key; turning TLS off \
                 needs a restart"
            ),
            (None, Some(_)) => {
                tracing::warn!("[tls] is set but TLS was off at start: a restart is needed");
                None
            }
            (None, None) => None,
        };
        let credentials = match &self.auth {
            Some(auth) => Some(crate::auth_config::reload_credentials(
                auth,
                &file,
                &self.default_account,
            )?),
            None => None,
        };
        // Last of what can fail: the engine re-wraps and stores the data
        // keys (a keyring lacking a stored key is refused here), and then
        // nothing else can fail.
        if let Some(rekey) = &self.rekey {
            self.reload_keyring(&file, rekey).await?;
        }
        if let (Some(auth), Some(prepared)) = (&self.auth, credentials) {
            let keys = Authenticator::prepared_len(&prepared);
            auth.install(prepared);
            tracing::info!(access_keys = keys, "reloaded the [auth] credentials");
        }
        if let (Some(tls), Some(config)) = (&self.tls, new_tls) {
            tls.replace(config);
            tracing::info!("reloaded the TLS certificate and key");
        }
        Ok(())
    }
}

impl Reloader {
    async fn reload_keyring(
        &self,
        file: &config::FileConfig,
        rekey: &Rekeyer,
    ) -> anyhow::Result<()> {
        let Some(ring) = crate::encryption_config::reload(self.flag_keyring.as_deref(), file)?
        else {
            anyhow::bail!(
                "the config file no longer names the encryption keyring; turning encryption \
                 off needs a restart"
            );
        };
        let active = ring.active().to_string();
        let done = rekey(Arc::new(ring))
            .await
            .map_err(|e| anyhow::anyhow!("the new keyring is not put in use: {e}"))?;
        tracing::info!(
            active_key = active,
            rewrapped = done.rewrapped,
            retired = done.retired,
            "reloaded the encryption keyring; data keys of the server's key rewrapped"
        );
        Ok(())
    }
}

/// The rustls configuration of `files`, read now.
fn server_config(files: &TlsFiles) -> anyhow::Result<ServerConfig> {
    Ok(tls::server_config(&files.cert, &files.key)?)
}

/// Reloads on every SIGHUP from now on (the handler is installed when
/// called: a SIGHUP right after the "listening" line must reload, not
/// kill the server). A failed reload is logged and keeps the settings in
/// use.
pub fn reload_on_hangup(reloader: Reloader) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangup = match signal(SignalKind::hangup()) {
            Ok(hangup) => hangup,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGHUP: no live reload");
                return;
            }
        };
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                tracing::info!(
                    "SIGHUP: reloading the TLS certificate, the credentials and the keyring"
                );
                if let Err(e) = reloader.reload().await {
                    tracing::error!(
                        error = format!("{e:#}"),
                        "reload failed: the settings in use are kept"
                    );
                }
            }
        });
    }
    #[cfg(not(unix))]
    drop(reloader);
}

/// The next delivery of a signal, or never if its handler could not be set.
#[cfg(unix)]
async fn next_signal(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// Resolves at Ctrl-C or SIGTERM. The handlers are installed here, when
/// called, not when first polled: a SIGTERM that arrives right after the
/// "listening" line must stop the server cleanly, not kill it.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut interrupt = signal(SignalKind::interrupt()).ok();
        async move {
            tokio::select! {
                () = next_signal(term.as_mut()) => {}
                () = next_signal(interrupt.as_mut()) => {}
            }
            tracing::info!("shutting down");
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
    }
}
