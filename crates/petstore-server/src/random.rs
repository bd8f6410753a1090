//! Random bytes from the operating system, as lowercase hex: key ids and development secrets.

/// `bytes` random bytes as `2 * bytes` lowercase hex digits.
pub(crate) fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buffer = vec![0_u8; bytes];
    getrandom::fill(&mut buffer)?;
    Ok(hex::encode(buffer))
}

#[cfg(test)]
mod tests {
    use super::random_hex;

    #[test]
    fn gives_two_hex_digits_per_byte_and_differs_each_time() {
        let a = random_hex(16).expect("randomness");
        assert_eq!(a.len(), 32);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, random_hex(16).expect("randomness"));
    }
}
