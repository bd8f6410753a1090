//! The TLS client's configuration: ring as the cryptography provider, TLS 1.2 and 1.3, HTTP/1.1
//! offered by ALPN, and trust in the system's root certificates plus those of an optional PEM
//! file, all read once when the sender is made.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use super::SenderError;

pub(crate) fn client_config(ca_file: Option<&Path>) -> Result<ClientConfig, SenderError> {
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = ca_file {
        for certificate in pem_certificates(path)? {
            roots.add(certificate).map_err(|err| SenderError::CaFile {
                path: path.to_owned(),
                reason: err.to_string(),
            })?;
        }
    }
    if roots.is_empty() {
        return Err(SenderError::NoRoots {
            problems: native.errors.iter().map(ToString::to_string).collect(),
        });
    }
    Ok(with_roots(roots))
}

/// A configuration trusting exactly `roots`.
pub(crate) fn with_roots(roots: RootCertStore) -> ClientConfig {
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("ring's provider supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

fn pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, SenderError> {
    let failed = |reason: String| SenderError::CaFile {
        path: path.to_owned(),
        reason,
    };
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|err| failed(err.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| failed(err.to_string()))?;
    if certificates.is_empty() {
        return Err(failed("it holds no PEM certificate".to_owned()));
    }
    Ok(certificates)
}
