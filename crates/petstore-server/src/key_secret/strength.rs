//! How guessable a key secret looks, from its bytes alone.
//!
//! A length check lets `aaaa…` or 32 spaces through. The estimate here is the secret's length
//! times the Shannon entropy of its byte frequencies: what the secret could carry at most if its
//! bytes were drawn at random with the frequencies they have. It cannot prove a secret random
//! (`abcdefgh…` scores well), but it refuses secrets built from few symbols or much repetition,
//! while the output of `openssl rand -hex 32` (about 240 bits by this estimate) or
//! `petstore keys secret` always passes.

/// Least estimate accepted: 128 bits, the strength HS256 keys are meant to have at minimum.
pub const MIN_ESTIMATED_BITS: f64 = 128.0;

/// The estimate, in bits: length times the entropy per byte of the byte frequencies.
pub fn estimated_bits(secret: &[u8]) -> f64 {
    if secret.is_empty() {
        return 0.0;
    }
    let mut counts = [0_u32; 256];
    for &byte in secret {
        counts[usize::from(byte)] += 1;
    }
    let length = secret.len() as f64;
    let per_byte: f64 = counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let share = f64::from(count) / length;
            -share * share.log2()
        })
        .sum();
    per_byte * length
}

/// Whether the secret clears [`MIN_ESTIMATED_BITS`].
pub fn is_strong(secret: &[u8]) -> bool {
    estimated_bits(secret) >= MIN_ESTIMATED_BITS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_and_few_symbols_are_weak() {
        for weak in [
            " ".repeat(32),
            "a".repeat(64),
            "ab".repeat(32),
            "password".repeat(4),
            "01234567".repeat(4),
        ] {
            assert!(
                !is_strong(weak.as_bytes()),
                "{weak:?}: {}",
                estimated_bits(weak.as_bytes())
            );
        }
        assert_eq!(estimated_bits(b""), 0.0);
        assert_eq!(estimated_bits(&[b'x'; 100]), 0.0);
        assert!(
            (estimated_bits(b"abab") - 4.0).abs() < 1e-9,
            "1 bit per byte"
        );
    }

    #[test]
    fn random_secrets_of_the_documented_size_are_strong() {
        for _ in 0..1000 {
            let hex = crate::random::random_hex(32).expect("randomness");
            assert!(
                is_strong(hex.as_bytes()),
                "{hex}: {}",
                estimated_bits(hex.as_bytes())
            );
        }
        let mut raw = [0_u8; 32];
        getrandom::fill(&mut raw).expect("randomness");
        assert!(is_strong(&raw), "{}", estimated_bits(&raw));
    }
}
