//! `sluice serve`'s HTTPS settings: the `[tls]` table and the
//! `--tls-cert`, `--tls-key` and `--plain-bind` flags (docs/security.md).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use sluice_server::http::ServerTls;

use crate::config::FileConfig;

/// The certificate chain and key files the main listener serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain, the server's certificate first.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

/// The HTTPS settings of the flags, else of the config file: `None` when
/// the server speaks plain HTTP only. Refused: a certificate without a
/// key or the reverse, and a plain listener beside a plain main listener.
pub fn tls_settings(
    flag_cert: Option<&Path>,
    flag_key: Option<&Path>,
    flag_plain_bind: Option<SocketAddr>,
    file: &FileConfig,
) -> anyhow::Result<Option<(TlsFiles, Option<SocketAddr>)>> {
    let table = file.tls.as_ref();
    let plain_bind = flag_plain_bind.or(table.and_then(|t| t.plain_bind));
    match tls_files(flag_cert, flag_key, file)? {
        Some(files) => Ok(Some((files, plain_bind))),
        None => {
            anyhow::ensure!(
                plain_bind.is_none(),
                "a plain-HTTP listener (--plain-bind, tls.plain_bind) is for a server whose \
                 main listener speaks HTTPS: give --tls-cert and --tls-key (tls.cert_file, \
                 tls.key_file), or use --bind alone"
            );
            Ok(None)
        }
    }
}

/// The certificate and key files of the flags, else of the config file;
/// a reload reads them again from the same places.
pub fn tls_files(
    flag_cert: Option<&Path>,
    flag_key: Option<&Path>,
    file: &FileConfig,
) -> anyhow::Result<Option<TlsFiles>> {
    let table = file.tls.as_ref();
    let cert = flag_cert
        .map(Path::to_path_buf)
        .or_else(|| table.and_then(|t| t.cert_file.clone()));
    let key = flag_key
        .map(Path::to_path_buf)
        .or_else(|| table.and_then(|t| t.key_file.clone()));
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key })),
        (None, None) => Ok(None),
        (Some(_), None) => {
            anyhow::bail!("a TLS certificate needs its key: --tls-key (tls.key_file)")
        }
        (None, Some(_)) => {
            anyhow::bail!("a TLS key needs its certificate: --tls-cert (tls.cert_file)")
        }
    }
}

/// Reads the certificate and key: a missing, unreadable or mismatched
/// file stops the start with what is wrong.
pub fn load(files: &TlsFiles) -> anyhow::Result<ServerTls> {
    let tls = ServerTls::from_pem_files(&files.cert, &files.key)?;
    tracing::info!(
        cert_file = %files.cert.display(),
        "TLS: the main listener speaks HTTPS (HTTP/1.1)"
    );
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(toml: &str) -> FileConfig {
        toml::from_str(toml).unwrap()
    }

    /// A10: the flags override the file; a certificate needs its key and
    /// the reverse; a plain listener needs TLS on the main one.
    #[test]
    fn a10_tls_settings_come_from_flags_or_file() {
        let none = FileConfig::default();
        assert!(tls_settings(None, None, None, &none).unwrap().is_none());
        let in_file = file(
            "[tls]\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\nplain_bind = \"127.0.0.1:9325\"\n",
        );
        let (files, plain) = tls_settings(None, None, None, &in_file).unwrap().unwrap();
        assert_eq!(files.cert, PathBuf::from("c.pem"));
        assert_eq!(plain, Some("127.0.0.1:9325".parse().unwrap()));
        let (files, _) = tls_settings(Some(Path::new("flag.pem")), None, None, &in_file)
            .unwrap()
            .unwrap();
        assert_eq!(
            (files.cert, files.key),
            (PathBuf::from("flag.pem"), PathBuf::from("k.pem"))
        );
        let e = tls_settings(Some(Path::new("c.pem")), None, None, &none).unwrap_err();
        assert!(e.to_string().contains("--tls-key"), "{e}");
        let e = tls_settings(None, Some(Path::new("k.pem")), None, &none).unwrap_err();
        assert!(e.to_string().contains("--tls-cert"), "{e}");
        let plain_only = tls_settings(None, None, Some("127.0.0.1:1".parse().unwrap()), &none);
        assert!(plain_only.unwrap_err().to_string().contains("--plain-bind"));
        assert!(toml::from_str::<FileConfig>("[tls]\ncert = \"c.pem\"\n").is_err());
    }

    /// A10: the `[tls]` example of docs/security.md parses into files and
    /// a plain listener.
    #[test]
    fn a10_documented_tls_example_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let block = doc
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .find(|b| b.contains("[tls]"))
            .expect("a [tls] example");
        let (files, plain) = tls_settings(None, None, None, &file(block))
            .unwrap()
            .unwrap();
        assert!(files.cert.ends_with("chain.pem") && files.key.ends_with("key.pem"));
        assert_eq!(plain, Some("127.0.0.1:9080".parse().unwrap()));
    }
}
