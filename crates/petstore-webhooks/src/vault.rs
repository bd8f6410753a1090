//! `SealedVault`: makes endpoints' signing secrets and keeps them sealed at rest, so that a copy
//! of the database (a backup, a replica) does not let anyone sign webhooks. Each secret is
//! sealed with XChaCha20-Poly1305 (random 192-bit nonces are safe to draw for ever) under a key
//! derived from the API key secret; a sealed secret names its key by an id, so a secret sealed
//! before a rotation of the API key secret still opens with the previous one.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use petstore_application::webhooks::{SealError, SealedSecret, SecretVault};
use petstore_domain::SigningSecret;
use sha2::Sha256;

/// What the sealing key is derived for, and the associated data of every seal: a key derived
/// from the API key secret for anything else never opens a webhook secret.
const LABEL: &[u8] = b"petstore/webhook-secret/v1";
/// The stored form's version, before its base64.
const STORED_PREFIX: &str = "v1.";
const KEY_ID_BYTES: usize = 4;
const NONCE_BYTES: usize = 24;
/// A new secret's key bytes: SHA-256's output size, within Standard Webhooks' 24 to 64.
const SECRET_BYTES: usize = 32;
const SIGNING_SECRET_PREFIX: &str = "whsec_";

/// Makes signing secrets (`whsec_` and the base64 of 32 random bytes) and seals them as
/// `v1.` + base64(key id (4 bytes) ‖ nonce (24) ‖ ciphertext and tag); opens what it sealed
/// with the current API key secret or one of the previous ones.
pub struct SealedVault {
    current: SealingKey,
    previous: Vec<SealingKey>,
}

struct SealingKey {
    id: [u8; KEY_ID_BYTES],
    cipher: XChaCha20Poly1305,
}

impl SealedVault {
    /// A vault sealing with a key derived from `current` (the API key secret's bytes) and also
    /// opening what was sealed under one of the `previous` ones.
    pub fn new(current: &[u8], previous: &[&[u8]]) -> Self {
        Self {
            current: SealingKey::derive(current),
            previous: previous
                .iter()
                .map(|secret| SealingKey::derive(secret))
                .collect(),
        }
    }

    fn seal(&self, plaintext: &[u8]) -> SealedSecret {
        let mut nonce = [0u8; NONCE_BYTES];
        fill_random(&mut nonce);
        let ciphertext = self
            .current
            .cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: LABEL,
                },
            )
            .expect("XChaCha20-Poly1305 seals any secret shorter than 256 GiB");
        let mut stored = Vec::with_capacity(KEY_ID_BYTES + NONCE_BYTES + ciphertext.len());
        stored.extend_from_slice(&self.current.id);
        stored.extend_from_slice(&nonce);
        stored.extend_from_slice(&ciphertext);
        SealedSecret(format!("{STORED_PREFIX}{}", STANDARD.encode(stored)))
    }

    fn unseal(&self, sealed: &SealedSecret) -> Option<Vec<u8>> {
        let stored = STANDARD
            .decode(sealed.0.strip_prefix(STORED_PREFIX)?)
            .ok()?;
        if stored.len() < KEY_ID_BYTES + NONCE_BYTES {
            return None;
        }
        let (key_id, rest) = stored.split_at(KEY_ID_BYTES);
        let (nonce, ciphertext) = rest.split_at(NONCE_BYTES);
        let nonce = XNonce::from(<[u8; NONCE_BYTES]>::try_from(nonce).ok()?);
        std::iter::once(&self.current)
            .chain(&self.previous)
            .filter(|key| key.id == key_id)
            .find_map(|key| {
                key.cipher
                    .decrypt(
                        &nonce,
                        Payload {
                            msg: ciphertext,
                            aad: LABEL,
                        },
                    )
                    .ok()
            })
    }
}

impl SecretVault for SealedVault {
    /// Panics when the operating system gives no random bytes: no secret can be made then.
    fn generate(&self) -> (SigningSecret, SealedSecret) {
        let mut key = [0u8; SECRET_BYTES];
        fill_random(&mut key);
        (signing_secret(&key), self.seal(&key))
    }

    fn open(&self, sealed: &SealedSecret) -> Result<SigningSecret, SealError> {
        self.unseal(sealed)
            .filter(|key| !key.is_empty())
            .map(|key| signing_secret(&key))
            .ok_or(SealError)
    }
}

impl fmt::Debug for SealedVault {
    // Never print key material.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedVault")
            .field("previous_keys", &self.previous.len())
            .finish_non_exhaustive()
    }
}

impl SealingKey {
    /// The key is HMAC-SHA256(API key secret, label), as the project derives its other keys
    /// from that secret; its id is the start of a MAC under it, which says nothing of the key.
    fn derive(key_secret: &[u8]) -> Self {
        let key: [u8; 32] = mac(key_secret, LABEL);
        let id_mac = mac(&key, b"id");
        let mut id = [0u8; KEY_ID_BYTES];
        id.copy_from_slice(&id_mac[..KEY_ID_BYTES]);
        Self {
            id,
            cipher: XChaCha20Poly1305::new(&key.into()),
        }
    }
}

fn mac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

fn signing_secret(key: &[u8]) -> SigningSecret {
    SigningSecret::new(format!("{SIGNING_SECRET_PREFIX}{}", STANDARD.encode(key)))
        .expect("the text starts with the secret's prefix")
}

fn fill_random(bytes: &mut [u8]) {
    getrandom::fill(bytes).expect("the operating system's random source answers");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const KEY_SECRET: &[u8] = b"the API key secret of these tests, 32+ bytes";
    const OTHER_KEY_SECRET: &[u8] = b"another API key secret, just as long as that";

    #[test]
    fn a_sealed_secret_opens_to_the_secret_made() {
        let vault = SealedVault::new(KEY_SECRET, &[]);
        let (secret, sealed) = vault.generate();
        assert_eq!(vault.open(&sealed).unwrap(), secret);
    }

    #[test]
    fn a_secret_is_whsec_and_the_base64_of_32_random_bytes() {
        let vault = SealedVault::new(KEY_SECRET, &[]);
        let (first, _) = vault.generate();
        let (second, _) = vault.generate();
        assert!(first.expose().starts_with("whsec_"));
        assert_eq!(STANDARD.decode(first.key_base64()).unwrap().len(), 32);
        assert_ne!(first, second);
    }

    #[test]
    fn the_sealed_form_hides_the_secret_and_differs_every_time() {
        let vault = SealedVault::new(KEY_SECRET, &[]);
        let (secret, sealed) = vault.generate();
        let again = vault.seal(&STANDARD.decode(secret.key_base64()).unwrap());
        assert!(sealed.0.starts_with("v1."));
        assert!(!sealed.0.contains(secret.key_base64()));
        assert_ne!(sealed, again);
        let stored = STANDARD.decode(&sealed.0[3..]).unwrap();
        assert_eq!(stored.len(), KEY_ID_BYTES + NONCE_BYTES + SECRET_BYTES + 16);
    }

    #[test]
    fn another_key_secret_does_not_open_it() {
        let (_, sealed) = SealedVault::new(KEY_SECRET, &[]).generate();
        assert!(SealedVault::new(OTHER_KEY_SECRET, &[])
            .open(&sealed)
            .is_err());
    }

    #[test]
    fn a_previous_key_secret_still_opens_what_it_sealed() {
        let (secret, sealed) = SealedVault::new(KEY_SECRET, &[]).generate();
        let rotated = SealedVault::new(OTHER_KEY_SECRET, &[KEY_SECRET]);
        assert_eq!(rotated.open(&sealed).unwrap(), secret);
        let (_, sealed_after) = rotated.generate();
        assert!(SealedVault::new(KEY_SECRET, &[])
            .open(&sealed_after)
            .is_err());
    }

    #[test]
    fn a_changed_or_malformed_sealed_secret_does_not_open() {
        let vault = SealedVault::new(KEY_SECRET, &[]);
        let (_, sealed) = vault.generate();
        let mut stored = STANDARD.decode(&sealed.0[3..]).unwrap();
        let last = stored.len() - 1;
        stored[last] ^= 1;
        let tampered = SealedSecret(format!("v1.{}", STANDARD.encode(&stored)));
        assert!(vault.open(&tampered).is_err());
        for raw in ["", "v1.", "v1.AAAA", "v2.AAAA", &sealed.0[3..]] {
            assert!(vault.open(&SealedSecret(raw.to_owned())).is_err(), "{raw}");
        }
    }

    #[test]
    fn the_vault_prints_no_key() {
        let printed = format!("{:?}", SealedVault::new(KEY_SECRET, &[KEY_SECRET]));
        assert_eq!(printed, "SealedVault { previous_keys: 1, .. }");
    }
}
