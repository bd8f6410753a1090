//! How guessable a key secret looks, from its bytes alone.
//!
//! A length check lets `aaaa…` or 32 spaces through. The estimate here is the least of three
//! views of the secret, each what it could carry at most if drawn at random:
//!
//! - its length times the Shannon entropy of its byte frequencies (few symbols: `aaaa…`);
//! - the same for the steps from each byte to the next (sequences: `0123…`, `abcd…`);
//! - for a secret that is a short string repeated, that string's own estimate (repetition adds
//!   nothing: `Xk9#mP2$Xk9#mP2$…`, `0123456789abcdef0123456789abcdef…`).
//!
//! It cannot prove a secret random, only catch the ones that plainly are not, by an estimate
//! rather than a list; the output of `openssl rand -hex 32` or `petstore keys secret` (about
//! 240 bits by this estimate) always passes.

/// Least estimate accepted: 128 bits, the strength HS256 keys are meant to have at minimum.
pub const MIN_ESTIMATED_BITS: f64 = 128.0;

/// The estimate, in bits: the least of the three views above.
pub fn estimated_bits(secret: &[u8]) -> f64 {
    let steps: Vec<u8> = secret
        .windows(2)
        .map(|pair| pair[1].wrapping_sub(pair[0]))
        .collect();
    // The first byte carries at most 8 bits of its own; the steps the rest.
    let sequence_bits = if secret.is_empty() {
        0.0
    } else {
        8.0 + frequency_bits(&steps)
    };
    frequency_bits(secret)
        .min(sequence_bits)
        .min(frequency_bits(&secret[..period(secret)]))
}

/// The estimate rounded down to whole bits, for messages: one short of the bound by a fraction
/// must not read as reaching it.
pub fn estimated_whole_bits(secret: &[u8]) -> u64 {
    // Never negative (each term of the sum is at least +0), and below 8 bits per byte.
    estimated_bits(secret).floor() as u64
}

/// Length times the entropy per byte of the byte frequencies: the sum over the bytes seen of
/// `count * log2(length / count)`. Written so, every term is at least +0; the textbook
/// `-share * log2(share)` is -0 for a byte that is the whole input, which prints as `-0`.
fn frequency_bits(bytes: &[u8]) -> f64 {
    let mut counts = [0_u32; 256];
    for &byte in bytes {
        counts[usize::from(byte)] += 1;
    }
    let length = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| f64::from(count) * (length / f64::from(count)).log2())
        // From +0: `Sum` starts an empty sum at -0.
        .fold(0.0, |sum, bits| sum + bits)
}

/// The length of the shortest string whose repetition (the last copy possibly cut short) is
/// `secret`; its whole length when it repeats nothing.
fn period(secret: &[u8]) -> usize {
    (1..secret.len())
        .find(|&p| secret.iter().skip(p).zip(secret).all(|(a, b)| a == b))
        .unwrap_or(secret.len())
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
            estimated_bits(&[b'x'; 100]).is_sign_positive(),
            "0, not -0, which a message would print as `-0`"
        );
        assert!(
            (frequency_bits(b"abab") - 4.0).abs() < 1e-9,
            "1 bit per byte"
        );
    }

    /// Patterned secrets that a byte-frequency estimate alone would score strong.
    #[test]
    fn sequences_and_short_strings_repeated_are_weak() {
        for weak in [
            "0123456789abcdef".repeat(4),
            "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned(),
            "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA9876543210".to_owned(),
            "Xk9#mP2$".repeat(8),
            "correct horse battery staple".repeat(3),
            "0246802468024680246802468024680246802468".to_owned(),
        ] {
            assert!(
                !is_strong(weak.as_bytes()),
                "{weak:?}: {}",
                estimated_bits(weak.as_bytes())
            );
        }
        assert_eq!(period(b"abcabcab"), 3);
        assert_eq!(period(b"abcd"), 4);
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
