//! Response bodies as JSON bytes. Each is written into a buffer the thread keeps between bodies
//! and then copied out once at its final size: serializing straight into a new `Vec` grows it
//! from 128 bytes by doubling, a copy and a free at each step for a page of pets. A body is
//! anything serde serializes, or a type that writes its own JSON faster ([`JsonBody`]).

use std::cell::RefCell;

use serde::Serialize;

/// What a thread's buffer keeps between bodies: a body larger than this is written all the
/// same, but its buffer is not kept for the next one.
const KEPT_CAPACITY: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A response body as JSON.
pub(crate) trait JsonBody {
    /// Appends the body's JSON to `out`.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

impl<T: Serialize + ?Sized> JsonBody for T {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(out, self)
    }
}

/// `value` as JSON, in a `Vec` allocated once at the body's length.
pub(crate) fn json_bytes(value: &(impl JsonBody + ?Sized)) -> serde_json::Result<Vec<u8>> {
    in_scratch(value, |written| written.to_vec())
}

/// The length of `value` as JSON, without keeping its bytes.
pub(crate) fn json_len(value: &(impl JsonBody + ?Sized)) -> serde_json::Result<usize> {
    in_scratch(value, <[u8]>::len)
}

/// What `then` makes of `value`'s JSON, written into the thread's buffer.
fn in_scratch<T>(
    value: &(impl JsonBody + ?Sized),
    then: impl FnOnce(&[u8]) -> T,
) -> serde_json::Result<T> {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            let written = value.write_json(&mut buffer).map(|()| then(&buffer));
            if buffer.capacity() > KEPT_CAPACITY {
                *buffer = Vec::new();
            }
            written
        }
        // A body that itself writes a body through here: the inner one gets a buffer of its
        // own rather than the one in use.
        Err(_) => {
            let mut buffer = Vec::new();
            value.write_json(&mut buffer).map(|()| then(&buffer))
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn writes_what_serde_json_writes() {
        let value = json!({"id": 1, "name": "R\"ex\n", "tags": ["a", "ü"], "price": null});
        assert_eq!(
            json_bytes(&value).unwrap(),
            serde_json::to_vec(&value).unwrap()
        );
    }

    #[test]
    fn a_body_leaves_nothing_behind_for_the_next() {
        let long = "x".repeat(3 * KEPT_CAPACITY);
        assert_eq!(json_bytes(&long).unwrap().len(), long.len() + 2);
        assert_eq!(json_bytes(&7).unwrap(), b"7");
        SCRATCH.with(|scratch| assert!(scratch.borrow().capacity() <= KEPT_CAPACITY));
    }

    #[test]
    fn the_length_is_the_bodys() {
        let value = json!({"name": "Tom \u{1F408}", "tags": []});
        assert_eq!(
            json_len(&value).unwrap(),
            serde_json::to_vec(&value).unwrap().len()
        );
    }

    #[test]
    fn the_copy_is_allocated_at_the_bodys_length() {
        let page: Vec<_> = (0..20).map(|id| json!({"id": id, "name": "Rex"})).collect();
        let bytes = json_bytes(&page).unwrap();
        assert_eq!(bytes.capacity(), bytes.len());
    }

    #[test]
    fn a_body_written_while_another_is_being_written_is_whole() {
        struct Nested;
        impl Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let inner = json_bytes(&json!({"inner": true})).unwrap();
                serializer.serialize_str(std::str::from_utf8(&inner).unwrap())
            }
        }
        assert_eq!(
            json_bytes(&Nested).unwrap(),
            serde_json::to_vec(r#"{"inner":true}"#).unwrap()
        );
    }
}
