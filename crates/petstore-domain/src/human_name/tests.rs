use super::*;

#[test]
fn names_people_give_are_accepted() {
    for name in [
        "Rex",
        "Zoë",
        "Zoe\u{308}",
        "Flöckchen",
        " Mr. Ñandú 🐦 ",
        "小白",
        "ポチ",
        "قطة",
        "כלב",
        "नमस्ते",
        "Rex\u{3000}der Zweite",
        // Emoji sequences: service dog (ZWJ), red heart (VS16), firefighter with a skin tone,
        // keycap one (VS16 and an enclosing mark), a flag of regional indicators.
        "🐕\u{200d}🦺",
        "\u{2764}\u{fe0f}",
        "👩🏽\u{200d}🚒",
        "1\u{fe0f}\u{20e3}",
        "🇩🇪",
    ] {
        assert_eq!(check(name), Ok(()), "{name:?}");
    }
}

#[test]
fn invisible_and_control_characters_are_refused_and_named() {
    use HiddenKind::*;
    for (name, found, kind) in [
        ("Rex\u{e0041}", '\u{e0041}', Invisible),
        ("Re\u{1d173}x", '\u{1d173}', Invisible),
        ("\u{2800}", '\u{2800}', BrailleBlank),
        ("Rex\u{200f}", '\u{200f}', BidiControl),
        ("Rex\u{61c}", '\u{61c}', BidiControl),
        ("abc\u{202e}gpj.exe", '\u{202e}', BidiControl),
        ("Rex\u{1b}[31m", '\u{1b}', Control),
        ("Rex\u{85}", '\u{85}', Control),
        ("Rex\n", '\n', Control),
        ("Re\0x", '\0', Control),
        ("Rex\u{2028}", '\u{2028}', Separator),
        ("Rex\u{e000}", '\u{e000}', Unassigned),
        ("Rex\u{378}", '\u{378}', Unassigned),
        ("\u{200b}\u{200b}", '\u{200b}', Invisible),
        ("Re\u{ad}x", '\u{ad}', Invisible),
        ("\u{3164}", '\u{3164}', Invisible),
        ("Re\u{200d}x", '\u{200d}', Joiner),
        ("🐕\u{200d}", '\u{200d}', Joiner),
        ("🐕 \u{200d}🦺", '\u{200d}', Joiner),
    ] {
        let at = name.chars().position(|c| c == found).unwrap() + 1;
        assert_eq!(
            check(name),
            Err(HumanNameError::Hidden { found, at, kind }),
            "{name:?}"
        );
    }
}

#[test]
fn a_mark_needs_a_visible_character_before_it() {
    for (name, found, at) in [
        ("\u{301}\u{301}", '\u{301}', 1),
        ("Rex \u{301}", '\u{301}', 5),
        ("\u{fe0f}Rex", '\u{fe0f}', 1),
    ] {
        assert_eq!(
            check(name),
            Err(HumanNameError::LoneMark { found, at }),
            "{name:?}"
        );
    }
}

#[test]
fn a_name_of_spaces_is_blank() {
    for name in ["", " ", "\u{3000}\u{a0}"] {
        assert_eq!(check(name), Err(HumanNameError::Blank), "{name:?}");
    }
}

#[test]
fn messages_show_code_points_never_the_characters() {
    let message = check("abc\u{202e}gpj.exe").unwrap_err().to_string();
    assert_eq!(
        message,
        "must not contain invisible or control characters: U+202E (character 4) is a \
         bidirectional control, which reorders how the text around it is displayed"
    );
    let message = check("Rex\u{e0041}").unwrap_err().to_string();
    assert!(
        message.contains("U+E0041") && message.is_ascii(),
        "{message}"
    );
}

/// The pattern says what `check` does: every class boundary alone, and every sequence of up to
/// three characters drawn from each kind of character the grammar tells apart.
#[test]
fn the_pattern_is_the_rule() {
    let regex = regex::Regex::new(pattern()).unwrap();
    let agrees = |name: &str| {
        assert_eq!(
            regex.is_match(name),
            check(name).is_ok(),
            "pattern and check disagree on {name:?}"
        );
    };
    let classes = &*CLASSES;
    let every_class = [
        &classes.visible,
        &classes.space,
        &classes.mark,
        &classes.selector,
        &classes.emoji,
    ];
    for class in every_class {
        for range in class.ranges() {
            let (start, end) = (u32::from(range.start()), u32::from(range.end()));
            for code in [start.saturating_sub(1), start, end, end + 1] {
                if let Some(c) = char::from_u32(code) {
                    agrees(&c.to_string());
                }
            }
        }
    }
    let kinds = [
        "a", "🐕", "🦺", " ", "\u{301}", "\u{fe0f}", "\u{200d}", "\u{202e}", "\n", "\u{2800}",
    ];
    for first in kinds {
        agrees(first);
        for second in kinds {
            agrees(&format!("{first}{second}"));
            for third in kinds {
                agrees(&format!("{first}{second}{third}"));
            }
        }
    }
}
