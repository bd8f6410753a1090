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
        // One selector, right after the character it selects a form of: red heart as text
        // (VS15), the rainbow flag (VS16 inside a ZWJ sequence), the turtle ideograph in the
        // shape of its third compatibility ideograph (VS3), Mongolian GA's second form (FVS1).
        "\u{2764}\u{fe0e}",
        "🏳\u{fe0f}\u{200d}🌈",
        "\u{9f9c}\u{fe02}",
        "\u{182d}\u{180b}",
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

/// A variation selector draws nothing; where it selects no form of the character before it, it
/// only carries hidden bytes ("Rex" followed by "secret" spelled in VS17-VS256).
#[test]
fn a_variation_selector_is_refused_where_it_selects_nothing() {
    let hidden_secret: String = "Rex"
        .chars()
        .chain(
            "secret"
                .bytes()
                .map(|byte| char::from_u32(0xe0100 + u32::from(byte)).unwrap()),
        )
        .collect();
    for (name, at) in [
        (hidden_secret.as_str(), 4),
        // Ideographic variation sequences (VS17-VS256), even after an ideograph.
        ("\u{845b}\u{e0100}", 2),
        // VS16 after a letter, which has no emoji form.
        ("Rex\u{fe0f}", 4),
        // VS1 after a letter; VS4 after an ideograph (compatibility shapes use VS1-VS3).
        ("R\u{fe00}ex", 2),
        ("\u{5c0f}\u{fe03}", 2),
        // A Mongolian free variation selector after a Latin letter.
        ("a\u{180b}", 2),
        // A second selector after the first, of the same kind or another.
        ("\u{2764}\u{fe0f}\u{fe0f}", 3),
        ("\u{2764}\u{fe0f}\u{fe0e}", 3),
        ("\u{9f9c}\u{fe00}\u{fe01}", 3),
        // Not right after its character: a mark stands between.
        ("\u{2764}\u{301}\u{fe0f}", 3),
    ] {
        let found = name.chars().nth(at - 1).unwrap();
        assert_eq!(
            check(name),
            Err(HumanNameError::Hidden {
                found,
                at,
                kind: HiddenKind::VariationSelector
            }),
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
    assert_eq!(
        check("Rex\u{e0100}").unwrap_err().to_string(),
        "must not contain invisible or control characters: U+E0100 (character 4) is a variation \
         selector that selects no form of the character before it (one may follow an emoji, a \
         CJK ideograph or a Mongolian letter)"
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
    let boundaries = |class: &ClassUnicode| -> Vec<char> {
        class
            .ranges()
            .iter()
            .flat_map(|range| {
                let (start, end) = (u32::from(range.start()), u32::from(range.end()));
                [start.saturating_sub(1), start, end, end + 1]
            })
            .filter_map(char::from_u32)
            .collect()
    };
    for class in every_class {
        for c in boundaries(class) {
            agrees(&c.to_string());
        }
    }
    // Each kind of selector after the edges of the characters it may follow.
    for variants in &classes.variants {
        let selectors = boundaries(&variants.selectors);
        for base in boundaries(&variants.bases) {
            for &selector in &selectors {
                agrees(&format!("{base}{selector}"));
            }
        }
    }
    let kinds = [
        "a",
        "1",
        "🐕",
        "🦺",
        "\u{2764}",
        "\u{9f9c}",
        "\u{182d}",
        " ",
        "\u{301}",
        "\u{fe0f}",
        "\u{fe0e}",
        "\u{fe00}",
        "\u{fe03}",
        "\u{e0100}",
        "\u{180b}",
        "\u{200d}",
        "\u{202e}",
        "\n",
        "\u{2800}",
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

#[test]
fn printable_ascii_is_judged_as_the_tables_judge_it() {
    let printable: Vec<char> = (b' '..=b'~').map(char::from).collect();
    for &c in &printable {
        let alone = c.to_string();
        assert_eq!(check(&alone), check_by_tables(&alone), "{c:?}");
        let name = format!("a{c} b");
        assert_eq!(check(&name), check_by_tables(&name), "{name:?}");
    }
    for name in [
        "",
        " ",
        "   ",
        "Rex",
        " Mr. Rex ",
        "a\tb",
        "a\u{7f}",
        "\u{1}",
    ] {
        assert_eq!(check(name), check_by_tables(name), "{name:?}");
    }
    assert_eq!(check("   "), Err(HumanNameError::Blank));
}
