//! TLS for `https://` endpoints: rustls on ring, trusting the system's root
//! certificates plus those of an optional PEM CA file (a self-signed or
//! private-CA server).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

use crate::error::ClientError;

/// The rustls settings of an `https://` endpoint: the system's roots (those
/// it cannot parse skipped) and every certificate of `ca_file`.
pub fn client_config(ca_file: Option<&Path>) -> Result<ClientConfig, ClientError> {
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = ca_file {
        let shown = path.display();
        let pem = std::fs::read(path)
            .map_err(|e| ClientError::Config(format!("cannot read --ca-file {shown}: {e}")))?;
        let mut added = 0;
        for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
            let cert = cert.map_err(|e| {
                ClientError::Config(format!("--ca-file {shown} is not valid PEM: {e}"))
            })?;
            roots.add(cert).map_err(|e| {
                ClientError::Config(format!(
                    "--ca-file {shown}: certificate {} is not usable: {e}",
                    i + 1
                ))
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(ClientError::Config(format!(
                "--ca-file {shown} holds no PEM CERTIFICATE"
            )));
        }
    }
    if roots.is_empty() {
        return Err(ClientError::Config(
            "no trusted root certificate: the system has none; give --ca-file".into(),
        ));
    }
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::Config(format!("TLS: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(config)
}
