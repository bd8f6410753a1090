//! The `webhook-signature` header of Standard Webhooks 1.0: for each secret, `v1,` and the
//! base64 of HMAC-SHA256 keyed by the secret's bytes over `{webhook-id}.{webhook-timestamp}.{body}`,
//! the entries separated by a space, so that a receiver holding either secret of a rotation
//! verifies the request.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use petstore_domain::SigningSecret;
use sha2::Sha256;

/// The header's value signed with each of `secrets`, in their order; `None` when no secret's key
/// decodes (a secret the vault did not make).
pub(crate) fn signature_header(
    secrets: &[SigningSecret],
    webhook_id: &str,
    timestamp_s: i64,
    body: &[u8],
) -> Option<String> {
    let entries: Vec<String> = secrets
        .iter()
        .filter_map(|secret| STANDARD.decode(secret.key_base64()).ok())
        .map(|key| {
            format!(
                "v1,{}",
                STANDARD.encode(sign(&key, webhook_id, timestamp_s, body))
            )
        })
        .collect();
    (!entries.is_empty()).then(|| entries.join(" "))
}

fn sign(key: &[u8], webhook_id: &str, timestamp_s: i64, body: &[u8]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(webhook_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp_s.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    // The fixture of the Standard Webhooks libraries; the expected values were computed with the
    // Python library `standardwebhooks` 1.1.0 (`Webhook(secret).sign(id, timestamp, body)`).
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP_S: i64 = 1_614_265_330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const SECRET_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    const OTHER_SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const OTHER_SIGNATURE: &str = "v1,O4Gjv1HqPqsMrjmczoggs/sWA8gZD0VyHG+fLh4+ktI=";

    fn secret(text: &str) -> SigningSecret {
        SigningSecret::new(text.to_owned()).unwrap()
    }

    #[test]
    fn one_secret_signs_as_the_reference_library_does() {
        assert_eq!(
            signature_header(&[secret(SECRET)], ID, TIMESTAMP_S, BODY).as_deref(),
            Some(SECRET_SIGNATURE)
        );
    }

    #[test]
    fn during_a_rotation_each_secret_signs_in_its_own_entry() {
        assert_eq!(
            signature_header(
                &[secret(OTHER_SECRET), secret(SECRET)],
                ID,
                TIMESTAMP_S,
                BODY
            ),
            Some(format!("{OTHER_SIGNATURE} {SECRET_SIGNATURE}"))
        );
    }

    #[test]
    fn the_timestamp_and_the_body_are_signed() {
        let header = |timestamp_s, body| signature_header(&[secret(SECRET)], ID, timestamp_s, body);
        assert_ne!(header(TIMESTAMP_S + 1, BODY), header(TIMESTAMP_S, BODY));
        assert_ne!(header(TIMESTAMP_S, b"{}"), header(TIMESTAMP_S, BODY));
    }

    #[test]
    fn a_secret_whose_key_does_not_decode_signs_nothing() {
        let broken = secret("whsec_not base64!");
        assert_eq!(
            signature_header(std::slice::from_ref(&broken), ID, TIMESTAMP_S, BODY),
            None
        );
        assert_eq!(
            signature_header(&[broken, secret(SECRET)], ID, TIMESTAMP_S, BODY).as_deref(),
            Some(SECRET_SIGNATURE)
        );
        assert_eq!(signature_header(&[], ID, TIMESTAMP_S, BODY), None);
    }
}
