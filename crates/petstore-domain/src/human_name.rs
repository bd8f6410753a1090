//! The one rule for every name a person types in (a pet's, an API key holder's): what is stored
//! is what a reader sees. Each type keeps its own length and trimming; the characters are
//! checked here, from Unicode's properties rather than hand-kept ranges.
//!
//! A name is a run of *visible* characters and spaces (general category Zs), with at least one
//! visible character. After a visible character may come combining marks (M) and variation
//! selectors, and a zero width joiner (U+200D) directly followed by an Extended_Pictographic
//! character, so emoji sequences work: service dog (U+1F415 U+200D U+1F9BA), red heart (U+2764
//! U+FE0F). Never allowed (and not visible):
//! controls (Cc: C0, C1, ESC, newlines), format characters (Cf: U+200F, U+061C, U+202E, zero
//! width spaces), private use and unassigned code points (Co, Cn), line and paragraph
//! separators (Zl, Zp), Default_Ignorable_Code_Point (tag characters U+E0000 to U+E007F, the
//! musical symbol invisibles U+1D173 to U+1D17A, Hangul fillers), Bidi_Control, and one named
//! exception: U+2800 BRAILLE PATTERN BLANK, a symbol (So) in Unicode that draws nothing, used to
//! pass blank text through filters. A visible character is any other than these, a space or a
//! mark. The zero width non-joiner (U+200C, Cf) is refused too, though Persian spelling uses it
//! between letters: allowing it there is a rule of its own, left until a name needs it.
//!
//! The property tables are `regex-syntax`'s (Unicode 16.0, the crate `regex` is built on, which
//! the workspace already depends on): a maintained, MIT/Apache source that has every property
//! the rule needs (general category, Default_Ignorable_Code_Point, Bidi_Control,
//! Variation_Selector, Extended_Pictographic) as sorted range lists, which also let
//! the tests write the rule as a regular expression to check it against itself. `icu_*` has
//! them too but is Unicode-3.0 licensed; `unicode-properties` lacks the ignorables.

use std::cmp::Ordering;
use std::fmt;
#[cfg(test)]
use std::fmt::Write as _;
use std::sync::LazyLock;

use regex_syntax::hir::{Class, ClassUnicode, HirKind};

/// Why a name breaks the rule. Characters are shown as code points (`U+202E`), never as
/// themselves: an error message must not be the deceptive text it refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HumanNameError {
    #[error("must not be blank")]
    Blank,
    #[error(
        "must not contain invisible or control characters: U+{:04X} (character {at}) is {kind}",
        u32::from(*found)
    )]
    Hidden {
        found: char,
        /// 1-based position, in characters.
        at: usize,
        kind: HiddenKind,
    },
    #[error(
        "must not have a combining mark or variation selector with no visible character before \
         it: U+{:04X} (character {at})",
        u32::from(*found)
    )]
    LoneMark { found: char, at: usize },
}

/// What a refused character is, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenKind {
    Control,
    BidiControl,
    Separator,
    Unassigned,
    /// A zero width joiner not followed by an emoji.
    Joiner,
    BrailleBlank,
    Invisible,
}

impl fmt::Display for HiddenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Control => "a control character",
            Self::BidiControl => {
                "a bidirectional control, which reorders how the text around it is displayed"
            }
            Self::Separator => "a line or paragraph separator",
            Self::Unassigned => "unassigned or for private use",
            Self::Joiner => "a zero width joiner, allowed only before an emoji",
            Self::BrailleBlank => "the blank braille pattern, which draws nothing",
            Self::Invisible => "invisible (a format character or default-ignorable code point)",
        })
    }
}

const ZWJ: char = '\u{200d}';
const BRAILLE_BLANK: char = '\u{2800}';

/// Checks `name`'s characters (not its length: each type has its own).
pub fn check(name: &str) -> Result<(), HumanNameError> {
    let classes = &*CLASSES;
    // Whether a mark, a variation selector or a joiner may come next: only right after a
    // visible character or what is attached to one.
    let mut attached = false;
    let mut visible = false;
    let mut chars = name.chars().enumerate().peekable();
    while let Some((index, c)) = chars.next() {
        let at = index + 1;
        if contains(&classes.visible, c) {
            (attached, visible) = (true, true);
        } else if contains(&classes.space, c) {
            attached = false;
        } else if contains(&classes.mark, c) || contains(&classes.selector, c) {
            if !attached {
                return Err(HumanNameError::LoneMark { found: c, at });
            }
        } else if c == ZWJ
            && attached
            && chars
                .peek()
                .is_some_and(|&(_, next)| contains(&classes.emoji, next))
        {
            // The emoji after it is visible: the next round marks it.
        } else {
            return Err(HumanNameError::Hidden {
                found: c,
                at,
                kind: classes.kind(c),
            });
        }
    }
    if visible {
        Ok(())
    } else {
        Err(HumanNameError::Blank)
    }
}

/// The rule as a regular expression over whole names: `^` spaces, then groups of a visible
/// character, what is attached to it and spaces, `$`; the character classes are the rule's own
/// tables written out as ranges. The tests check [`check`] against it at every class boundary.
/// Not published in the OpenAPI document: OpenAPI tools (Spectral, Redocly) read patterns as
/// ECMA-262 without the `u` flag, where ranges above the Basic Multilingual Plane are invalid;
/// the document states the rule in words.
#[cfg(test)]
pub(crate) fn pattern() -> &'static str {
    &PATTERN
}

#[cfg(test)]
static PATTERN: LazyLock<String> = LazyLock::new(|| {
    let classes = &*CLASSES;
    let mut attachable = classes.mark.clone();
    attachable.union(&classes.selector);
    let space = render(&classes.space);
    format!(
        "^{space}*(?:{visible}(?:{attachable}|\\u{zwj:04x}{emoji})*{space}*)+$",
        visible = render(&classes.visible),
        attachable = render(&attachable),
        zwj = u32::from(ZWJ),
        emoji = render(&classes.emoji),
    )
});

#[cfg(test)]
fn render(class: &ClassUnicode) -> String {
    let mut out = String::from("[");
    for range in class.ranges() {
        push_escaped(&mut out, range.start());
        if range.end() != range.start() {
            out.push('-');
            push_escaped(&mut out, range.end());
        }
    }
    out.push(']');
    out
}

#[cfg(test)]
fn push_escaped(out: &mut String, c: char) {
    match u16::try_from(u32::from(c)) {
        Ok(unit) => {
            let _ = write!(out, "\\u{unit:04x}");
        }
        Err(_) => out.push(c),
    }
}

/// The rule's character classes, built once from the property tables.
struct Classes {
    visible: ClassUnicode,
    space: ClassUnicode,
    /// Combining marks that are not default-ignorable (CGJ U+034F and the variation selectors
    /// are marks too).
    mark: ClassUnicode,
    selector: ClassUnicode,
    /// Extended_Pictographic and visible: what a zero width joiner may join on to.
    emoji: ClassUnicode,
    control: ClassUnicode,
    bidi: ClassUnicode,
    separator: ClassUnicode,
    unassigned: ClassUnicode,
}

static CLASSES: LazyLock<Classes> = LazyLock::new(|| {
    // Surrogates (Cs) are left out: a Rust string cannot hold one.
    let never = class(concat!(
        r"[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}",
        r"\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\x{2800}]"
    ));
    let space = difference(class(r"\p{Zs}"), &never);
    let mark = difference(class(r"\p{M}"), &never);
    // `ClassUnicode::negate` joins the characters either side of the surrogates into one range
    // when both are excluded (U+D7FF and U+E000 here): a difference from every character does not.
    let mut invisible = never;
    invisible.union(&space);
    invisible.union(&class(r"\p{M}"));
    let visible = difference(class(r"\p{Any}"), &invisible);
    let mut emoji = class(r"\p{Extended_Pictographic}");
    emoji.intersect(&visible);
    Classes {
        visible,
        space,
        mark,
        selector: class(r"\p{Variation_Selector}"),
        emoji,
        control: class(r"\p{Cc}"),
        bidi: class(r"\p{Bidi_Control}"),
        separator: class(r"[\p{Zl}\p{Zp}]"),
        unassigned: class(r"[\p{Co}\p{Cn}]"),
    }
});

impl Classes {
    fn kind(&self, c: char) -> HiddenKind {
        if contains(&self.control, c) {
            HiddenKind::Control
        } else if contains(&self.bidi, c) {
            HiddenKind::BidiControl
        } else if contains(&self.separator, c) {
            HiddenKind::Separator
        } else if contains(&self.unassigned, c) {
            HiddenKind::Unassigned
        } else if c == ZWJ {
            HiddenKind::Joiner
        } else if c == BRAILLE_BLANK {
            HiddenKind::BrailleBlank
        } else {
            HiddenKind::Invisible
        }
    }
}

/// The class a bracket or `\p` expression (of more than one character) stands for.
fn class(expression: &str) -> ClassUnicode {
    let hir = regex_syntax::Parser::new()
        .parse(expression)
        .expect("the rule's class expressions are valid");
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => class,
        other => panic!("{expression} is not a Unicode class: {other:?}"),
    }
}

fn difference(mut class: ClassUnicode, minus: &ClassUnicode) -> ClassUnicode {
    class.difference(minus);
    class
}

fn contains(class: &ClassUnicode, c: char) -> bool {
    class
        .ranges()
        .binary_search_by(|range| {
            if range.end() < c {
                Ordering::Less
            } else if range.start() > c {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests;
