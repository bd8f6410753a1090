//! The sender refuses to be made when it would trust no certificate at all. Alone in its test
//! binary: it points the process's `SSL_CERT_FILE` and `SSL_CERT_DIR` at empty places.

#![allow(clippy::unwrap_used)]

use std::io::Write;

use petstore_test_support::webhook_receiver::WebhookReceiver;
use petstore_webhooks::{HttpsSender, SenderError, SenderSettings};

#[test]
fn without_any_root_certificate_the_sender_is_not_made() {
    let empty_dir = tempfile::tempdir().unwrap();
    let empty_file = empty_dir.path().join("empty.pem");
    std::fs::File::create(&empty_file)
        .unwrap()
        .write_all(b"")
        .unwrap();
    std::env::set_var("SSL_CERT_FILE", &empty_file);
    std::env::set_var("SSL_CERT_DIR", empty_dir.path());

    let error = HttpsSender::new(&SenderSettings::default()).unwrap_err();
    assert!(matches!(error, SenderError::NoRoots { .. }), "{error:?}");
    assert!(error.to_string().contains("SSL_CERT_FILE"), "{error}");

    // A CA file alone is enough to be made.
    let receiver = WebhookReceiver::start();
    let settings = SenderSettings {
        ca_file: Some(receiver.ca_pem_path().to_owned()),
        ..SenderSettings::default()
    };
    assert!(HttpsSender::new(&settings).is_ok());

    let not_pem = empty_dir.path().join("not.pem");
    std::fs::write(&not_pem, "no certificate here").unwrap();
    let settings = SenderSettings {
        ca_file: Some(not_pem),
        ..SenderSettings::default()
    };
    assert!(matches!(
        HttpsSender::new(&settings),
        Err(SenderError::CaFile { .. })
    ));
}
