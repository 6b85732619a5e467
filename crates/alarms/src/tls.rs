//! TLS for `https://` webhooks: Mozilla's root certificates (webpki-roots),
//! plus the certificates of an optional CA file for private receivers.
//!
//! The CA file is read when the settings are made (at `sluice serve`
//! start), so a bad file stops the server instead of the first alarm.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

/// Why a webhook CA file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaFileError {
    /// The file cannot be read.
    #[error("cannot read the webhook CA file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A PEM section is malformed.
    #[error("the webhook CA file {path} is not valid PEM: {reason}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What the PEM reader said.
        reason: String,
    },
    /// No `CERTIFICATE` section in the file.
    #[error("the webhook CA file {path} holds no PEM CERTIFICATE")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A certificate cannot be a trust anchor.
    #[error("the webhook CA file {path}: certificate {number} is not usable: {reason}")]
    Certificate {
        /// The file.
        path: PathBuf,
        /// 1-based position in the file.
        number: usize,
        /// What rustls said.
        reason: String,
    },
}

/// The TLS client settings of webhook deliveries.
#[derive(Debug, Clone)]
pub struct WebhookTls {
    config: ClientConfig,
    extra_roots: usize,
}

impl Default for WebhookTls {
    /// Mozilla's roots only.
    fn default() -> Self {
        Self::trusting(RootCertStore::empty())
    }
}

impl WebhookTls {
    /// Mozilla's roots and every certificate of the PEM file at `path`.
    pub fn with_ca_file(path: &Path) -> Result<Self, CaFileError> {
        let pem = std::fs::read(path).map_err(|source| CaFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut extra = RootCertStore::empty();
        for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
            let cert = cert.map_err(|e| CaFileError::Pem {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
            extra.add(cert).map_err(|e| CaFileError::Certificate {
                path: path.to_path_buf(),
                number: i + 1,
                reason: e.to_string(),
            })?;
        }
        if extra.is_empty() {
            return Err(CaFileError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Self::trusting(extra))
    }

    /// How many certificates the CA file added to Mozilla's roots.
    pub fn extra_roots(&self) -> usize {
        self.extra_roots
    }

    /// The rustls client settings (no ALPN: webhooks speak HTTP/1.1).
    pub fn client_config(&self) -> ClientConfig {
        self.config.clone()
    }

    fn trusting(extra: RootCertStore) -> Self {
        let extra_roots = extra.len();
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        roots.roots.extend(extra.roots);
        let config =
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                // ring's provider supports both default versions (TLS 1.2, 1.3).
                .expect("the ring provider supports TLS 1.2 and 1.3")
                .with_root_certificates(roots)
                .with_no_client_auth();
        Self {
            config,
            extra_roots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    fn ca_pem() -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let der = params.self_signed(&key).unwrap().der().to_vec();
        pem("CERTIFICATE", &der)
    }

    /// PEM text of one DER object (rcgen's `pem` feature would add a crate).
    fn pem(label: &str, der: &[u8]) -> String {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn default_trusts_mozillas_roots() {
        let tls = WebhookTls::default();
        assert_eq!(tls.extra_roots(), 0);
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
    }

    /// Every certificate of the file is added; other PEM sections (a key
    /// kept in the same file) are skipped.
    #[test]
    fn ca_file_certificates_are_added() {
        let text = format!("{}{}{}", ca_pem(), pem("PRIVATE KEY", b"x"), ca_pem());
        let f = file(text.as_bytes());
        assert_eq!(WebhookTls::with_ca_file(f.path()).unwrap().extra_roots(), 2);
    }

    #[test]
    fn bad_ca_files_are_refused_with_the_reason() {
        let missing = WebhookTls::with_ca_file(Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert!(matches!(missing, CaFileError::Read { .. }), "{missing}");
        assert!(missing.to_string().contains("/nonexistent/ca.pem"));

        let f = file(b"not a certificate\n");
        let empty = WebhookTls::with_ca_file(f.path()).unwrap_err();
        assert!(matches!(empty, CaFileError::Empty { .. }), "{empty}");

        let f = file(b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n");
        let pem_err = WebhookTls::with_ca_file(f.path()).unwrap_err();
        assert!(matches!(pem_err, CaFileError::Pem { .. }), "{pem_err}");

        let f = file(pem("CERTIFICATE", b"not DER").as_bytes());
        let der = WebhookTls::with_ca_file(f.path()).unwrap_err();
        assert!(
            matches!(der, CaFileError::Certificate { number: 1, .. }),
            "{der}"
        );
    }
}
