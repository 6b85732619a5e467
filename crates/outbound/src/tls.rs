//! The certificates outbound `https://` requests are checked against:
//! Mozilla's roots (webpki-roots, the same on every machine: webhooks and
//! push consumers' handlers) or the system's (the operator commands and
//! the bench, which reach the operator's own endpoints), plus the
//! certificates of an optional PEM CA file for private receivers.
//!
//! A CA file is read when the settings are made (at `sluice serve` start,
//! or when a command starts), so a bad file stops the start instead of
//! the first request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

/// Which roots a client trusts besides its CA file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roots {
    /// Mozilla's, compiled in.
    Mozilla,
    /// The system's (those it cannot parse skipped).
    System,
    /// None: for a client that only ever speaks plain HTTP, or trusts its
    /// CA file alone.
    None,
}

/// Why a CA file cannot be used. `setting` names the setting that gave
/// the file (`the webhook CA file`, `--ca-file`), as the messages say it.
#[derive(Debug, thiserror::Error)]
pub enum CaFileError {
    /// The file cannot be read.
    #[error("cannot read {setting} {path}: {source}")]
    Read {
        /// The setting.
        setting: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A PEM section is malformed.
    #[error("{setting} {path} is not valid PEM: {reason}")]
    Pem {
        /// The setting.
        setting: &'static str,
        /// The file.
        path: PathBuf,
        /// What the PEM reader said.
        reason: String,
    },
    /// No `CERTIFICATE` section in the file.
    #[error("{setting} {path} holds no PEM CERTIFICATE")]
    Empty {
        /// The setting.
        setting: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A certificate cannot be a trust anchor.
    #[error("{setting} {path}: certificate {number} is not usable: {reason}")]
    Certificate {
        /// The setting.
        setting: &'static str,
        /// The file.
        path: PathBuf,
        /// 1-based position in the file.
        number: usize,
        /// What rustls said.
        reason: String,
    },
}

/// The TLS client settings of outbound requests: rustls on ring, TLS 1.2
/// and 1.3, no ALPN (HTTP/1.1 only), no client certificate.
#[derive(Debug, Clone)]
pub struct OutboundTls {
    config: ClientConfig,
    roots: usize,
    extra_roots: usize,
}

impl Default for OutboundTls {
    /// Mozilla's roots only.
    fn default() -> Self {
        Self::trusting(Roots::Mozilla)
    }
}

impl OutboundTls {
    /// `roots` only.
    pub fn trusting(roots: Roots) -> Self {
        Self::build(roots, RootCertStore::empty())
    }

    /// `roots` and every certificate of the PEM file at `path`, which the
    /// setting `setting` gave.
    pub fn with_ca_file(
        roots: Roots,
        path: &Path,
        setting: &'static str,
    ) -> Result<Self, CaFileError> {
        let pem = std::fs::read(path).map_err(|source| CaFileError::Read {
            setting,
            path: path.to_path_buf(),
            source,
        })?;
        let mut extra = RootCertStore::empty();
        for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
            let cert = cert.map_err(|e| CaFileError::Pem {
                setting,
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
            extra.add(cert).map_err(|e| CaFileError::Certificate {
                setting,
                path: path.to_path_buf(),
                number: i + 1,
                reason: e.to_string(),
            })?;
        }
        if extra.is_empty() {
            return Err(CaFileError::Empty {
                setting,
                path: path.to_path_buf(),
            });
        }
        Ok(Self::build(roots, extra))
    }

    /// How many certificates the CA file added to the roots.
    pub fn extra_roots(&self) -> usize {
        self.extra_roots
    }

    /// How many certificates are trusted in all (none: no `https://`
    /// request can succeed).
    pub fn roots(&self) -> usize {
        self.roots
    }

    /// The rustls client settings.
    pub fn client_config(&self) -> ClientConfig {
        self.config.clone()
    }

    fn build(roots: Roots, extra: RootCertStore) -> Self {
        let extra_roots = extra.len();
        let mut store = match roots {
            Roots::Mozilla => RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            },
            Roots::System => {
                let mut store = RootCertStore::empty();
                store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
                store
            }
            Roots::None => RootCertStore::empty(),
        };
        store.roots.extend(extra.roots);
        let roots = store.len();
        let config =
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                // ring's provider supports both default versions (TLS 1.2, 1.3).
                .expect("the ring provider supports TLS 1.2 and 1.3")
                .with_root_certificates(store)
                .with_no_client_auth();
        Self {
            config,
            roots,
            extra_roots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTING: &str = "the test CA file";

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
        let tls = OutboundTls::default();
        assert_eq!(tls.extra_roots(), 0);
        assert_eq!(tls.roots(), webpki_roots::TLS_SERVER_ROOTS.len());
        assert!(tls.roots() > 100);
        assert_eq!(OutboundTls::trusting(Roots::None).roots(), 0);
    }

    /// Every certificate of the file is added; other PEM sections (a key
    /// kept in the same file) are skipped.
    #[test]
    fn ca_file_certificates_are_added() {
        let text = format!("{}{}{}", ca_pem(), pem("PRIVATE KEY", b"x"), ca_pem());
        let f = file(text.as_bytes());
        let tls = OutboundTls::with_ca_file(Roots::Mozilla, f.path(), SETTING).unwrap();
        assert_eq!(tls.extra_roots(), 2);
        assert_eq!(tls.roots(), webpki_roots::TLS_SERVER_ROOTS.len() + 2);
        let alone = OutboundTls::with_ca_file(Roots::None, f.path(), SETTING).unwrap();
        assert_eq!(alone.roots(), 2);
    }

    #[test]
    fn bad_ca_files_are_refused_with_the_reason() {
        let ca_file = |path: &Path| OutboundTls::with_ca_file(Roots::Mozilla, path, SETTING);
        let missing = ca_file(Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert!(matches!(missing, CaFileError::Read { .. }), "{missing}");
        assert!(
            missing
                .to_string()
                .starts_with("cannot read the test CA file /nonexistent/ca.pem: "),
            "{missing}"
        );

        let f = file(b"not a certificate\n");
        let empty = ca_file(f.path()).unwrap_err();
        assert!(matches!(empty, CaFileError::Empty { .. }), "{empty}");
        assert_eq!(
            empty.to_string(),
            format!(
                "the test CA file {} holds no PEM CERTIFICATE",
                f.path().display()
            )
        );

        let f = file(b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n");
        let pem_err = ca_file(f.path()).unwrap_err();
        assert!(matches!(pem_err, CaFileError::Pem { .. }), "{pem_err}");

        let f = file(pem("CERTIFICATE", b"not DER").as_bytes());
        let der = ca_file(f.path()).unwrap_err();
        assert!(
            matches!(der, CaFileError::Certificate { number: 1, .. }),
            "{der}"
        );
    }
}
