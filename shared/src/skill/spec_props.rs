//! Properties of the SKILL.md parser and validator: any text (random, or frontmatter-shaped from
//! hostile YAML fragments) is parsed without a panic, and a refusal names the file and a line
//! inside it; a well-formed skill always round-trips; the name rules agree with a plain oracle.

use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::skill::naming::check_command_component;

const PATH: &str = "/skills/x/SKILL.md";

/// YAML lines a hand-written or hostile frontmatter may hold: wrong types, anchors and aliases,
/// tags, block scalars, flow collections, stray fences, NULs and control characters.
fn yaml_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "name: [a-z0-9-]{0,70}",
        "name: [ -~]{0,12}",
        Just("name: [a, b]".to_string()),
        Just("name: 12".to_string()),
        "description: [ -~]{0,40}",
        Just("description:".to_string()),
        Just("description: |\n  one\n  two".to_string()),
        Just("description: {a: 1}".to_string()),
        "metadata:\n  [a-z]{1,5}: [ -~]{0,8}",
        Just("metadata: [1, 2]".to_string()),
        Just("allowed-tools: [Bash, {x: 1}, null]".to_string()),
        "allowed-tools: [ -~]{0,20}",
        "tags: [0-9]{1,3}",
        Just("type: meta".to_string()),
        "type: [a-z]{0,6}",
        Just("title: ~".to_string()),
        "version: [0-9.]{0,6}",
        Just("a: &x [1, 2]\nb: [*x, *x, *x]".to_string()),
        Just("? complex\n: key".to_string()),
        Just("!!binary aGVsbG8=".to_string()),
        Just("x: !custom tag".to_string()),
        Just("- a list item".to_string()),
        Just("  indented: odd".to_string()),
        Just("'unterminated".to_string()),
        Just("\"bad \\q escape\"".to_string()),
        Just("---".to_string()),
        Just("...".to_string()),
        Just("key: \u{0}nul".to_string()),
        Just("\t tab: start".to_string()),
        "[ -~]{0,30}",
        "\\PC{0,20}",
    ]
}

/// A SKILL.md-like document: optional BOM, opening fence, YAML lines, maybe a closing fence, a body.
fn skill_text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(yaml_line(), 0..8),
        prop_oneof![Just("---"), Just("..."), Just("--- "), Just("")],
        "\\PC{0,40}",
        any::<bool>(),
    )
        .prop_map(|(bom, open, lines, close, body, crlf)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            if open {
                text.push_str("---");
                text.push_str(nl);
            }
            for l in lines {
                text.push_str(&l.replace('\n', nl));
                text.push_str(nl);
            }
            text.push_str(close);
            text.push_str(nl);
            text.push_str(&body);
            text
        })
}

/// Checks what every answer must satisfy, whatever the input.
fn check_answer(text: &str, folder: Option<&str>) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1);
    match parse_skill_md(Path::new(PATH), text, folder) {
        Ok(parsed) => {
            prop_assert!(
                validate_name_shape_ok(&parsed.meta.name),
                "{:?}",
                parsed.meta
            );
            prop_assert!(!parsed.meta.description.is_empty());
            prop_assert_eq!(parsed.meta.description.trim(), &parsed.meta.description);
            prop_assert!(text.is_char_boundary(parsed.body_offset));
            for w in &parsed.warnings {
                let shown = w.to_string();
                prop_assert!(shown.starts_with(&format!("{PATH}:")), "{}", shown);
                prop_assert!(!w.message.is_empty());
            }
        }
        Err(e) => {
            let shown = e.to_string();
            let rest = shown.strip_prefix(&format!("{PATH}:"));
            prop_assert!(
                rest.is_some(),
                "error does not start with the file: {}",
                shown
            );
            let line: usize = rest
                .and_then(|r| r.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            prop_assert!(
                (1..=lines + 1).contains(&line),
                "line {} outside 1..={}: {}",
                line,
                lines + 1,
                shown
            );
            prop_assert!(
                shown.len() > PATH.len() + 12,
                "too short to say why: {}",
                shown
            );
        }
    }
    Ok(())
}

/// The spec's name rule written out plainly, as the oracle for [`validate_name`].
fn validate_name_shape_ok(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

proptest! {
    #[test]
    fn any_text_is_answered_without_panic(text in "\\PC{0,200}") {
        check_answer(&text, Some("x"))?;
        check_answer(&text, None)?;
    }

    #[test]
    fn frontmatter_shaped_text_is_answered_with_file_and_line(text in skill_text()) {
        check_answer(&text, Some("pdf-editor"))?;
        check_answer(&text, None)?;
    }

    #[test]
    fn a_well_formed_skill_round_trips(
        name in "[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}",
        quoted in any::<bool>(),
        description in "[A-Za-z][A-Za-z0-9 .,]{0,60}[A-Za-z0-9.]",
        heading in "[A-Za-z][A-Za-z0-9 ]{0,20}[A-Za-z0-9]",
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        // Unquoted, YAML reads `123`, `0e0`, `true` or `null` as other types: those need quotes.
        let plain_string = name.starts_with(|c: char| c.is_ascii_lowercase())
            && !["true", "false", "null", "yes", "no", "on", "off", "y", "n"].contains(&name.as_str());
        let shown = if quoted || !plain_string { format!("'{name}'") } else { name.clone() };
        let text = format!("---{nl}name: {shown}{nl}description: \"{description}\"{nl}---{nl}# {heading}{nl}body{nl}");
        let parsed = parse_skill_md(Path::new(PATH), &text, Some(&name));
        prop_assert!(parsed.is_ok(), "{:?}", parsed);
        let parsed = parsed.map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed.meta.name, &name);
        prop_assert_eq!(&parsed.meta.description, &description);
        prop_assert_eq!(parsed.meta.title.as_deref(), Some(heading.as_str()));
        prop_assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        prop_assert!(text[parsed.body_offset..].starts_with("# "));
        prop_assert_eq!(parsed.body_line, 5);
    }

    #[test]
    fn name_rules_agree_with_the_oracle(name in prop_oneof!["[a-z0-9-]{0,70}", "\\PC{0,12}"]) {
        let expected = validate_name_shape_ok(&name) && name.chars().count() <= NAME_MAX_CHARS;
        match validate_name(&name) {
            Ok(()) => prop_assert!(expected, "{:?} accepted", name),
            Err(reason) => {
                prop_assert!(!expected, "{:?} refused: {}", name, reason);
                prop_assert!(!reason.is_empty());
            }
        }
    }

    /// Whatever a command component accepts is one shell word that needs no quoting and is a
    /// plain file name: no injection through `skill:<skill>:<script>`.
    #[test]
    fn command_components_are_shell_and_file_safe(part in "\\PC{0,20}") {
        if check_command_component(&part).is_ok() {
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
            prop_assert!(part.chars().all(plain), "{:?}", part);
            prop_assert!(!part.starts_with(['-', '.']));
        }
    }
}
