//! Client text as an error message may quote it: every character that is invisible or reorders
//! the text around it written as `\u{202e}`, so that a message shown to a person is never the
//! deceptive text it quotes. Applied to every message where errors are built
//! ([`ApiError::new`](super::ApiError::new)), so no message that quotes a path, a parameter, a
//! field name or a header can forget it.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

/// The characters escaped: controls (Cc), format characters (Cf: every bidirectional control,
/// zero width spaces and joiners, tag characters), private use and unassigned code points (Co,
/// Cn), line and paragraph separators (Zl, Zp) and the rest of Default_Ignorable_Code_Point
/// (variation selectors, Hangul fillers): what the rule for names refuses as not visible. By
/// Unicode's properties (the `regex` crate's tables), not hand-kept ranges.
static HIDDEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]")
        .expect("a valid class")
});

/// `text` with each hidden character written as `\u{hex}`; borrowed when there is none.
pub(crate) fn escape_hidden(text: &str) -> Cow<'_, str> {
    HIDDEN.replace_all(text, |found: &regex::Captures<'_>| {
        let mut escaped = String::new();
        for c in found[0].chars() {
            let _ = write!(escaped, "\\u{{{:x}}}", u32::from(c));
        }
        escaped
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_and_other_hidden_characters_are_written_as_code_points() {
        for (text, shown) in [
            ("abc\u{202e}gpj.exe", "abc\\u{202e}gpj.exe"),
            (
                "\u{61c}\u{200e}\u{200f}\u{202a}\u{2066}\u{2069}",
                "\\u{61c}\\u{200e}\\u{200f}\\u{202a}\\u{2066}\\u{2069}",
            ),
            ("a\nb\u{0}\u{85}", "a\\u{a}b\\u{0}\\u{85}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("Rex\u{fe00}\u{e0073}", "Rex\\u{fe00}\\u{e0073}"),
            ("line\u{2028}para\u{2029}", "line\\u{2028}para\\u{2029}"),
        ] {
            assert_eq!(escape_hidden(text), shown, "{text:?}");
        }
    }

    #[test]
    fn visible_text_is_kept_as_it_is() {
        for text in [
            "unknown query parameter `fields`; getOrder takes none",
            "Zoë, Zoe\u{308}, 東京, \u{1f415}",
            "`Idempotency-Key` is \"quoted\" \\ here",
        ] {
            assert!(matches!(escape_hidden(text), Cow::Borrowed(_)), "{text}");
        }
    }
}
