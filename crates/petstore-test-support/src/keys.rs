//! Reading an issued key's claims, as a client might (the server checks them; tests read them).

use serde_json::Value;

/// The claims of a key, decoded.
pub fn claims_of(key: &str) -> Value {
    use base64::Engine as _;
    let payload = key.split('.').nth(1).expect("a JWT has a payload");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON")
}
