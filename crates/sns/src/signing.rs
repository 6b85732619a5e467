//! The key sluice signs its SNS messages with, and the certificate it
//! serves at each message's `SigningCertURL` (rule N3): an RSA key of 2048
//! bits, made once and kept (in the data directory of a durable server),
//! so that verifiers that cache certificates by URL keep verifying across
//! restarts. Signatures are RSA PKCS#1 v1.5 over SHA-1 (`SignatureVersion`
//! 1) or SHA-256 (2), base64, as SNS signs.
//!
//! The certificate names the key's issuer and subject "Amazon Simple
//! Notification Service (sluice)": some verifiers require "Amazon" in both.
//! Its path, `SimpleNotificationService-<32 hex>.pem`, holds a digest of
//! the certificate, as SNS's do, which some verifiers also require.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::sha2::{Digest as _, Sha256};
use rsa::{Pkcs1v15Sign, PrivateKey as RsaPrivateKey};

/// What can go wrong making, reading or using the key.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// The key could not be made.
    #[error("cannot make the SNS signing key: {0}")]
    Generate(String),
    /// The stored key does not read as a PKCS#8 RSA key.
    #[error("the SNS signing key does not read as a PKCS#8 PEM RSA key: {0}")]
    Decode(String),
    /// The certificate could not be made.
    #[error("cannot make the SNS signing certificate: {0}")]
    Certificate(String),
    /// A signature could not be made.
    #[error("cannot sign: {0}")]
    Sign(String),
}

/// True for a path shaped as a certificate's (`/SimpleNotificationService-
/// <32 hex>.pem`): the one path of the server's that is neither an API
/// request nor the console's.
pub fn is_certificate_path(path: &str) -> bool {
    path.strip_prefix("/SimpleNotificationService-")
        .and_then(|rest| rest.strip_suffix(".pem"))
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The key and its certificate.
pub struct SigningKey {
    key: RsaPrivateKey,
    certificate_pem: String,
    certificate_name: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("certificate_name", &self.certificate_name)
            .finish_non_exhaustive()
    }
}

/// A signature's version: which hash it signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureVersion {
    /// SHA1withRSA, SNS's default.
    V1,
    /// SHA256withRSA.
    V2,
}

impl SignatureVersion {
    /// The version as envelopes write it.
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureVersion::V1 => "1",
            SignatureVersion::V2 => "2",
        }
    }
}

impl SigningKey {
    /// A new key, and its certificate.
    pub fn generate() -> Result<Self, SigningError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| SigningError::Generate(e.to_string()))?;
        Self::derive(&seed)
    }

    /// The key derived from `secret`, and its certificate: the same secret
    /// gives the same key (and certificate name) on every node and after
    /// every restart, so the key need not be kept apart from the secret.
    /// Its primes come from ChaCha20 seeded with a digest of the secret
    /// under a name of this use alone.
    pub fn derive(secret: &[u8]) -> Result<Self, SigningError> {
        use chacha20::rand_core::SeedableRng;
        let mut digest = Sha256::new();
        digest.update(b"sluice SNS signing key, version 1\0");
        digest.update(secret);
        let seed: [u8; 32] = digest.finalize().into();
        let mut rng = chacha20::ChaCha20Rng::from_seed(seed);
        let key = RsaPrivateKey::new(&mut rng, 2048)
            .map_err(|e| SigningError::Generate(e.to_string()))?;
        Self::with_key(key)
    }

    /// The key kept as PKCS#8 PEM, and its certificate.
    pub fn from_pem(pem: &str) -> Result<Self, SigningError> {
        let key =
            RsaPrivateKey::from_pkcs8_pem(pem).map_err(|e| SigningError::Decode(e.to_string()))?;
        Self::with_key(key)
    }

    /// The key as PKCS#8 PEM, to keep.
    pub fn to_pem(&self) -> Result<String, SigningError> {
        self.key
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .map_err(|e| SigningError::Decode(e.to_string()))
    }

    fn with_key(key: RsaPrivateKey) -> Result<Self, SigningError> {
        let certificate_pem = certificate(&key)?;
        let digest = Sha256::digest(certificate_pem.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Ok(SigningKey {
            key,
            certificate_pem,
            certificate_name: format!("SimpleNotificationService-{hex}.pem"),
        })
    }

    /// The certificate, PEM.
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// The certificate's file name (`SimpleNotificationService-<hex>.pem`),
    /// the last segment of `SigningCertURL`.
    pub fn certificate_name(&self) -> &str {
        &self.certificate_name
    }

    /// The base64 signature of `text` in `version`.
    pub fn sign(&self, version: SignatureVersion, text: &str) -> Result<String, SigningError> {
        let signature = match version {
            SignatureVersion::V1 => {
                let digest = <sha1::Sha1 as sha1::Digest>::digest(text.as_bytes());
                self.key.sign(Pkcs1v15Sign::new::<sha1::Sha1>(), &digest)
            }
            SignatureVersion::V2 => {
                let digest = Sha256::digest(text.as_bytes());
                self.key.sign(Pkcs1v15Sign::new::<Sha256>(), &digest)
            }
        };
        signature
            .map(|s| STANDARD.encode(s))
            .map_err(|e| SigningError::Sign(e.to_string()))
    }

    /// Whether `signature` (base64) is this key's signature of `text` in
    /// `version`: for tests, and for checking a kept key at start.
    pub fn verifies(&self, version: SignatureVersion, text: &str, signature: &str) -> bool {
        let Ok(signature) = STANDARD.decode(signature) else {
            return false;
        };
        let public = self.key.to_public_key();
        let checked = match version {
            SignatureVersion::V1 => {
                let digest = <sha1::Sha1 as sha1::Digest>::digest(text.as_bytes());
                public.verify(Pkcs1v15Sign::new::<sha1::Sha1>(), &digest, &signature)
            }
            SignatureVersion::V2 => {
                let digest = Sha256::digest(text.as_bytes());
                public.verify(Pkcs1v15Sign::new::<Sha256>(), &digest, &signature)
            }
        };
        checked.is_ok()
    }
}

/// A self-signed certificate of `key`, PEM.
fn certificate(key: &RsaPrivateKey) -> Result<String, SigningError> {
    let cert_error = |e: rcgen::Error| SigningError::Certificate(e.to_string());
    let der = key
        .to_pkcs8_der()
        .map_err(|e| SigningError::Certificate(e.to_string()))?;
    let pkcs8 = rustls_pki_types::PrivatePkcs8KeyDer::from(der.as_bytes().to_vec());
    let pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&pkcs8, &rcgen::PKCS_RSA_SHA256)
        .map_err(cert_error)?;
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
    let mut name = rcgen::DistinguishedName::new();
    name.push(
        rcgen::DnType::CommonName,
        "Amazon Simple Notification Service (sluice)",
    );
    name.push(
        rcgen::DnType::OrganizationName,
        "Amazon-compatible (sluice)",
    );
    params.distinguished_name = name;
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    // The same key makes the same certificate (PKCS#1 v1.5 signatures are
    // deterministic): its URL stays the same across restarts.
    let public = key
        .to_public_key()
        .to_public_key_der()
        .map_err(|e| SigningError::Certificate(e.to_string()))?;
    params.serial_number = Some(rcgen::SerialNumber::from_slice(
        &Sha256::digest(public.as_bytes())[..16],
    ));
    let cert = params.self_signed(&pair).map_err(cert_error)?;
    Ok(pem("CERTIFICATE", cert.der()))
}

/// `der` as PEM with `label`.
fn pem(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N3: the key's certificate is served at a path of its shape only.
    #[test]
    fn n3_certificate_paths() {
        let key = SigningKey::generate().unwrap();
        assert!(is_certificate_path(&format!("/{}", key.certificate_name())));
        assert!(!is_certificate_path("/SimpleNotificationService-.pem"));
        assert!(!is_certificate_path(
            "/SimpleNotificationService-0123456789abcdef0123456789abcdeg.pem"
        ));
        assert!(!is_certificate_path(
            "/queue/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem"
        ));
    }

    /// N3: both versions sign so the key's public half verifies, and a
    /// kept key signs the same after it is read back.
    #[test]
    fn n3_signatures_verify_and_the_key_is_kept() {
        let key = SigningKey::generate().unwrap();
        for version in [SignatureVersion::V1, SignatureVersion::V2] {
            let signature = key.sign(version, "Message\nhello\n").unwrap();
            assert!(key.verifies(version, "Message\nhello\n", &signature));
            assert!(!key.verifies(version, "Message\nhullo\n", &signature));
        }
        let v1 = key.sign(SignatureVersion::V1, "x").unwrap();
        assert!(
            !key.verifies(SignatureVersion::V2, "x", &v1),
            "versions differ"
        );
        let again = SigningKey::from_pem(&key.to_pem().unwrap()).unwrap();
        assert_eq!(again.certificate_pem(), key.certificate_pem());
        assert_eq!(again.certificate_name(), key.certificate_name());
        assert!(again.verifies(
            SignatureVersion::V2,
            "y",
            &key.sign(SignatureVersion::V2, "y").unwrap()
        ));
        assert!(
            key.certificate_pem()
                .starts_with("-----BEGIN CERTIFICATE-----\n")
        );
        let name = key.certificate_name();
        assert!(name.starts_with("SimpleNotificationService-") && name.ends_with(".pem"));
        assert_eq!(name.len(), "SimpleNotificationService-".len() + 32 + 4);
    }
}
