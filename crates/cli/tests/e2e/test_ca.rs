//! A private certificate authority made on the fly, for the tests of
//! outbound `https://` (alarm webhooks, push consumers' handlers): its
//! certificate as a PEM file for a CA-file setting, and TLS acceptors
//! presenting certificates it issued.

use std::sync::Arc;

use base64::Engine;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::{self, pki_types};

/// A private CA that issues server certificates for 127.0.0.1 and localhost.
pub(crate) struct TestCa {
    issuer: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    pub(crate) fn new() -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sluice test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        Self {
            issuer: rcgen::CertifiedIssuer::self_signed(params, key).unwrap(),
        }
    }

    /// The CA certificate as a PEM file in `dir`.
    pub(crate) fn write_pem(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let b64 = base64::engine::general_purpose::STANDARD.encode(self.issuer.der());
        let body: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let path = dir.join("test-ca.pem");
        let pem = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            body.join("\n")
        );
        std::fs::write(&path, pem).unwrap();
        path
    }

    /// A TLS acceptor presenting a certificate this CA issued.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        let params =
            rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &*self.issuer).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
            )
            .unwrap();
        TlsAcceptor::from(Arc::new(config))
    }
}
