//! HTTPS: the server's certificate and key (PEM files), turned into a
//! rustls configuration that can be replaced while the server runs (a
//! reload on SIGHUP) without touching the connections already open.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
/// The rustls server configuration [`server_config`] builds.
pub use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::server::TlsStream;

/// Why a certificate or key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file cannot be read or holds no PEM certificate.
    #[error("cannot read the TLS certificate file {path}: {reason}")]
    Certificate {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The key file cannot be read or holds no PEM private key.
    #[error("cannot read the TLS key file {path}: {reason}")]
    Key {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// rustls refuses the pair (most often: the key is not the
    /// certificate's).
    #[error("the TLS key {key} does not go with the certificate {cert}: {reason}")]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        reason: String,
    },
}

/// The certificate chain and key the server presents, replaceable while
/// it runs: each handshake reads the configuration in use once, lock-free.
pub struct ServerTls {
    config: ArcSwap<ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Reads the PEM certificate chain (the server's certificate first)
    /// and private key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        Ok(Self {
            config: ArcSwap::from_pointee(server_config(cert, key)?),
        })
    }

    /// Serves `config` (see [`server_config`]) to new connections from
    /// now; open connections keep the pair they were opened with.
    pub fn replace(&self, config: ServerConfig) {
        self.config.store(Arc::new(config));
    }

    /// An acceptor with the pair in use now.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config.load_full())
    }
}

/// A rustls server configuration (ring, TLS 1.2 and 1.3, HTTP/1.1 by
/// ALPN) presenting `cert` with `key`.
pub fn server_config(cert: &Path, key: &Path) -> Result<ServerConfig, TlsError> {
    let cert_error = |reason: String| TlsError::Certificate {
        path: cert.to_path_buf(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_error("no PEM CERTIFICATE in it".into()));
    }
    let private_key = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.to_path_buf(),
        reason: e.to_string(),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, private_key))
        .map_err(|e| TlsError::Pair {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            reason: e.to_string(),
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What a plain-HTTP client that reached the HTTPS port is told.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\n\
Content-Type: text/plain\r\n\
Content-Length: 58\r\n\
Connection: close\r\n\
\r\n\
This port speaks HTTPS: send the request to https:// URLs\n";

/// Completes the TLS handshake of `stream` within `limit`, or drops it: a
/// client that is silent, too slow, or not speaking TLS. A plain-HTTP
/// request is answered with a 400 that says to use HTTPS, then closed.
pub async fn handshake(
    mut stream: TcpStream,
    acceptor: TlsAcceptor,
    limit: Duration,
) -> Option<TlsStream<TcpStream>> {
    let shaken = tokio::time::timeout(limit, async move {
        let mut first = [0u8; 1];
        if stream.peek(&mut first).await? == 1 && first[0] != TLS_HANDSHAKE_RECORD {
            answer_plain_http(&mut stream).await?;
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a plain-HTTP request on the HTTPS port",
            ));
        }
        acceptor.accept(stream).await
    });
    match shaken.await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!("TLS handshake did not finish within the header timeout");
            None
        }
    }
}

/// Answers a plain-HTTP client with [`PLAIN_HTTP_ANSWER`]. What it sent is
/// read first, and after the answer until it closes (within the
/// handshake's time limit): closing with unread bytes would reset the
/// connection and the client could lose the answer.
async fn answer_plain_http(stream: &mut TcpStream) -> io::Result<()> {
    let mut sink = [0u8; 4096];
    let _ = stream.read(&mut sink).await?;
    stream.write_all(PLAIN_HTTP_ANSWER).await?;
    stream.shutdown().await?;
    while stream.read(&mut sink).await? > 0 {}
    Ok(())
}
