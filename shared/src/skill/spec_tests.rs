//! Example-based tests of SKILL.md parsing and spec validation: name rules, errors with their
//! lines, lenient-rule warnings and the optional fields.

use super::*;
use pretty_assertions::assert_eq;

fn parse(text: &str, folder: &str) -> Result<ParsedSkill, SkillFormatError> {
    parse_skill_md(Path::new("/s/x/SKILL.md"), text, Some(folder))
}

#[test]
fn name_validation_table() {
    let good = ["a", "pdf-editor", "x1", "a-b-c", "0abc", &"a".repeat(64)];
    for name in good {
        assert_eq!(validate_name(name), Ok(()), "{name}");
    }
    let bad = [
        ("", "empty"),
        ("-a", "hyphen"),
        ("a-", "hyphen"),
        ("a--b", "two hyphens"),
        ("Abc", "'A'"),
        ("a_b", "'_'"),
        ("a b", "' '"),
        ("a;b", "';'"),
        ("ä", "'ä'"),
        (&"a".repeat(65), "longer than 64"),
    ];
    for (name, why) in bad {
        let err = validate_name(name).unwrap_err();
        assert!(err.contains(why), "{name:?}: {err}");
    }
}

#[test]
fn description_table() {
    let ok = parse(
        "---\nname: x\ndescription: Does x. Use when x.\n---\nbody",
        "x",
    )
    .unwrap();
    assert_eq!(ok.meta.description, "Does x. Use when x.");
    assert!(ok.warnings.is_empty(), "{:?}", ok.warnings);

    for text in [
        "---\nname: x\n---\n",
        "---\nname: x\ndescription: \"\"\n---\n",
        "---\nname: x\ndescription:\n---\n",
    ] {
        let err = parse(text, "x").unwrap_err();
        assert!(
            matches!(err, SkillFormatError::MissingDescription { .. }),
            "{text:?}: {err}"
        );
        assert!(err.to_string().starts_with("/s/x/SKILL.md:"), "{err}");
    }
    let err = parse("---\nname: x\ndescription: [a]\n---\n", "x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "/s/x/SKILL.md:3: `description` must be a string"
    );

    let long = format!("---\nname: x\ndescription: {}\n---\n", "d".repeat(1380));
    let over = parse(&long, "x").unwrap();
    assert_eq!(over.meta.description.chars().count(), 1380);
    assert_eq!(
        over.warnings[0].to_string(),
        "/s/x/SKILL.md:3: `description` has 1380 characters, over the limit of 1024 (loaded anyway); shorten it to what the skill does and when to use it"
    );
    let max = format!("---\nname: x\ndescription: {}\n---\n", "d".repeat(1024));
    assert!(parse(&max, "x").unwrap().warnings.is_empty());
}

#[test]
fn lenient_name_rules_warn() {
    let p = parse("---\nname: other\ndescription: d\n---\n", "x").unwrap();
    assert_eq!(p.meta.name, "other");
    assert_eq!(
        p.warnings[0].to_string(),
        "/s/x/SKILL.md:2: `name: other` does not match its folder \"x\""
    );

    // Over the spec's limit is refused, on load as on `skill create` (one rule).
    let long = "a".repeat(65);
    let err = parse(&format!("---\nname: {long}\ndescription: d\n---\n"), &long).unwrap_err();
    assert!(
        err.to_string().contains("longer than 64 characters"),
        "{err}"
    );

    let p = parse("---\ndescription: d\n---\n", "from-folder").unwrap();
    assert_eq!(p.meta.name, "from-folder");

    // A title is not a name: Claude Code names the skill by its folder, and so do we.
    let p = parse(
        "---\nname: Agent Development\ndescription: d\n---\n",
        "agent-development",
    )
    .unwrap();
    assert_eq!(p.meta.name, "agent-development");
    assert_eq!(
        p.warnings[0].to_string(),
        "/s/x/SKILL.md:2: `name: Agent Development` is not a valid skill name ('A' is not allowed; use lowercase letters, digits and hyphens); using the folder name \"agent-development\""
    );
    // Without a usable folder name it stays refused, naming the line.
    let err = parse("---\nname: Bad_Name\ndescription: d\n---\n", "Bad_Folder").unwrap_err();
    assert!(
        matches!(err, SkillFormatError::InvalidName { line: 2, .. }),
        "{err}"
    );
}

#[test]
fn unquoted_colon_value_is_retried_quoted() {
    let p = parse(
        "---\nname: x\ndescription: Reviews code. Use when: the user asks for a review\n---\nbody",
        "x",
    )
    .unwrap();
    assert_eq!(
        p.meta.description,
        "Reviews code. Use when: the user asks for a review"
    );
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(
        p.warnings[0]
            .to_string()
            .starts_with("/s/x/SKILL.md:3: unquoted value containing `: `"),
        "{}",
        p.warnings[0]
    );
    // A frontmatter the retry cannot mend keeps the first error, with its file line.
    let err = parse(
        "---\nname: x\ndescription: a: b\nmetadata: [unclosed\n---\n",
        "x",
    )
    .unwrap_err();
    assert!(matches!(err, SkillFormatError::Yaml { .. }), "{err}");
    assert!(err.to_string().starts_with("/s/x/SKILL.md:3:"), "{err}");
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let err = parse(
        "---\nname: x\ndescription: d\nmetadata: [unclosed\n---\nbody\n",
        "x",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SkillFormatError::Yaml { .. }), "{text}");
    assert!(text.starts_with("/s/x/SKILL.md:"), "{text}");
    let line: usize = text.split(':').nth(1).unwrap().parse().unwrap();
    assert!((4..=5).contains(&line), "{text}");

    let err = parse("---\n- a\n- b\n---\n", "x").unwrap_err();
    assert!(matches!(err, SkillFormatError::NotAMapping { .. }), "{err}");
}

#[test]
fn optional_fields_and_extras() {
    let text = "---\nname: x\ndescription: d\nlicense: MIT\ncompatibility: needs python3\n\
metadata:\n  version: 1.2\n  author: Me\n  tags: a, b\nallowed-tools: Read, Bash(git:*)\ntype: meta\n\
custom: {k: 1}\n---\n# Title Here\n\nBody\n";
    let p = parse(text, "x").unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let m = &p.meta;
    assert_eq!(m.license.as_deref(), Some("MIT"));
    assert_eq!(m.compatibility.as_deref(), Some("needs python3"));
    assert_eq!(m.version.as_deref(), Some("1.2"));
    assert_eq!(m.author.as_deref(), Some("Me"));
    assert_eq!(m.tags, vec!["a", "b"]);
    assert_eq!(m.allowed_tools, vec!["Read", "Bash(git:*)"]);
    assert_eq!(m.kind, SkillKind::Meta);
    assert_eq!(m.title.as_deref(), Some("Title Here"));
    assert_eq!(m.extra.get("custom"), Some(&serde_json::json!({"k": 1})));
    assert_eq!(&text[p.body_offset..], "# Title Here\n\nBody\n");
    assert_eq!(p.body_line, 14);

    let p = parse(
        "---\nname: x\ndescription: d\nallowed-tools: [Read, Write]\n---\n",
        "x",
    )
    .unwrap();
    assert_eq!(p.meta.allowed_tools, vec!["Read", "Write"]);
}

#[test]
fn wrong_shapes_warn_but_load() {
    let text = format!(
        "---\nname: x\ndescription: d\ncompatibility: {}\nmetadata: 5\ntype: weird\nallowed-tools: {{a: 1}}\n---\n",
        "c".repeat(501)
    );
    let p = parse(&text, "x").unwrap();
    let all: Vec<String> = p.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all.iter().any(|w| w.contains("compatibility")));
    assert!(
        all.iter()
            .any(|w| w.contains("/s/x/SKILL.md:5: `metadata` must be a mapping"))
    );
    assert!(all.iter().any(|w| w.contains("type: weird")));
}

#[test]
fn claude_code_fields_and_allowed_tools_with_parentheses() {
    let p = parse(
        "---\nname: x\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\nargument-hint: \"[file] [--fast]\"\nallowed-tools: Bash(git, diff:*), Read, Bash(npm run test:*)\n---\n",
        "x",
    )
    .unwrap();
    assert!(p.meta.disable_model_invocation);
    assert!(!p.meta.user_invocable);
    assert_eq!(p.meta.argument_hint.as_deref(), Some("[file] [--fast]"));
    assert_eq!(
        p.meta.allowed_tools,
        ["Bash(git, diff:*)", "Read", "Bash(npm run test:*)"]
    );
    let p = parse(
        "---\nname: x\ndescription: d\nallowed-tools: Read Bash(git log:*) Grep\n---\n",
        "x",
    )
    .unwrap();
    assert_eq!(p.meta.allowed_tools, ["Read", "Bash(git log:*)", "Grep"]);
    assert!(p.meta.user_invocable && !p.meta.disable_model_invocation);
}
