//! The one rule for every name a person types in (a pet's, an API key holder's): what is stored
//! is what a reader sees. Each type keeps its own length and trimming; the characters are
//! checked here, from Unicode's properties rather than hand-kept ranges.
//!
//! A name is a run of *visible* characters and spaces (general category Zs), with at least one
//! visible character. After a visible character may come combining marks (M), and a zero width
//! joiner (U+200D) directly followed by an Extended_Pictographic character, so emoji sequences
//! work: service dog (U+1F415 U+200D U+1F9BA). A variation selector draws nothing and, where it
//! selects no form of the character before it, only carries hidden bytes; so at most one may
//! follow a visible character, directly, and only one that has such forms: VS15 or VS16
//! (U+FE0E, U+FE0F: text or emoji presentation) after an Emoji character (red heart, U+2764
//! U+FE0F), VS1 to VS3 (U+FE00 to U+FE02: the shapes of the compatibility ideographs) after a
//! Unified_Ideograph, a Mongolian free variation selector (U+180B to U+180D, U+180F) after a
//! Mongolian letter. Every other selector is refused: the standardized sequences left select
//! forms of math symbols and of a few scripts' letters that no name needs, and VS17 to VS256
//! (U+E0100 to U+E01EF, ideographic variation sequences) are a registry of their own, tens of
//! thousands of sequences, not carried here; without them an ideograph carries no hidden byte,
//! and reads the same. Never allowed (and not visible):
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
//! Variation_Selector, Extended_Pictographic, Emoji, Unified_Ideograph, Script) as sorted range
//! lists, which also let the tests write the rule as a regular expression to check it against
//! itself. `icu_*` has them too but is Unicode-3.0 licensed; `unicode-properties` lacks the
//! ignorables.

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
    /// A variation selector that selects no form of the character before it.
    VariationSelector,
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
            Self::VariationSelector => {
                "a variation selector that selects no form of the character before it (one may \
                 follow an emoji, a CJK ideograph or a Mongolian letter)"
            }
            Self::Invisible => "invisible (a format character or default-ignorable code point)",
        })
    }
}

const ZWJ: char = '\u{200d}';
const BRAILLE_BLANK: char = '\u{2800}';

/// Checks `name`'s characters (not its length: each type has its own).
pub fn check(name: &str) -> Result<(), HumanNameError> {
    // Most names are printable ASCII, where every character but the space is visible: decided
    // without the Unicode tables. Anything else (a control character too) takes the full rule.
    if name.bytes().all(|byte| (b' '..=b'~').contains(&byte)) {
        return if name.bytes().any(|byte| byte != b' ') {
            Ok(())
        } else {
            Err(HumanNameError::Blank)
        };
    }
    check_by_tables(name)
}

/// [`check`] by the Unicode tables, for any name.
fn check_by_tables(name: &str) -> Result<(), HumanNameError> {
    let classes = &*CLASSES;
    // Whether a mark, a variation selector or a joiner may come next: only right after a
    // visible character or what is attached to one.
    let mut attached = false;
    // The visible character right before, when nothing came between: the only one a variation
    // selector may select a form of, so there is at most one selector per character.
    let mut base = None;
    let mut visible = false;
    let mut chars = name.chars().enumerate().peekable();
    while let Some((index, c)) = chars.next() {
        let at = index + 1;
        let before = base.take();
        if contains(&classes.visible, c) {
            (attached, visible, base) = (true, true, Some(c));
        } else if contains(&classes.space, c) {
            attached = false;
        } else if contains(&classes.mark, c) || contains(&classes.selector, c) {
            if !attached {
                return Err(HumanNameError::LoneMark { found: c, at });
            }
            if contains(&classes.selector, c)
                && !before.is_some_and(|before| classes.selects(before, c))
            {
                return Err(HumanNameError::Hidden {
                    found: c,
                    at,
                    kind: HiddenKind::VariationSelector,
                });
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
    let space = render(&classes.space);
    format!(
        "^{space}*(?:{visible}(?:{mark}|\\u{zwj:04x}{joined})*{space}*)+$",
        visible = with_selector(&classes.visible),
        mark = render(&classes.mark),
        zwj = u32::from(ZWJ),
        joined = with_selector(&classes.emoji),
    )
});

/// One character of `class`, with the one variation selector that may follow it, if any.
#[cfg(test)]
fn with_selector(class: &ClassUnicode) -> String {
    let mut alternatives = vec![render(class)];
    for variants in &CLASSES.variants {
        let mut bases = variants.bases.clone();
        bases.intersect(class);
        if bases.ranges().is_empty() {
            continue;
        }
        alternatives.push(format!("{}{}", render(&bases), render(&variants.selectors)));
    }
    format!("(?:{})", alternatives.join("|"))
}

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
    /// Every variation selector; each may follow only the characters of one of `variants`.
    selector: ClassUnicode,
    variants: [Variants; 3],
    /// Extended_Pictographic and visible: what a zero width joiner may join on to.
    emoji: ClassUnicode,
    control: ClassUnicode,
    bidi: ClassUnicode,
    separator: ClassUnicode,
    unassigned: ClassUnicode,
}

/// Variation selectors and the characters they select forms of.
struct Variants {
    bases: ClassUnicode,
    selectors: ClassUnicode,
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
    let variants = |bases: &str, selectors: &str| {
        let mut bases = class(bases);
        bases.intersect(&visible);
        Variants {
            bases,
            selectors: class(selectors),
        }
    };
    let variants = [
        // Text (VS15) or emoji (VS16) presentation, which only characters that are emoji have.
        variants(r"\p{Emoji}", r"[\x{FE0E}\x{FE0F}]"),
        // VS1-VS3 give a unified ideograph the shape of one of its compatibility ideographs, as
        // Korean and Japanese names may need; no ideograph has more than three.
        variants(r"\p{Unified_Ideograph}", r"[\x{FE00}-\x{FE02}]"),
        // Mongolian's free variation selectors pick a letter's written form.
        variants(
            r"[\p{Script=Mongolian}&&\p{L}]",
            r"[\x{180B}-\x{180D}\x{180F}]",
        ),
    ];
    Classes {
        visible,
        space,
        mark,
        selector: class(r"\p{Variation_Selector}"),
        variants,
        emoji,
        control: class(r"\p{Cc}"),
        bidi: class(r"\p{Bidi_Control}"),
        separator: class(r"[\p{Zl}\p{Zp}]"),
        unassigned: class(r"[\p{Co}\p{Cn}]"),
    }
});

impl Classes {
    /// Whether the variation selector `selector` may follow `base` directly.
    fn selects(&self, base: char, selector: char) -> bool {
        self.variants.iter().any(|variants| {
            contains(&variants.selectors, selector) && contains(&variants.bases, base)
        })
    }

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
