//! Properties of the permission rules loader (the `permissions` object of a settings file):
//! any JSON loads without a panic; every entry that is not used becomes exactly one problem
//! that names its key path; a `prefix:*` rule matches the commands it spells out, with any
//! arguments after, and nothing that merely starts with the same letters.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::parse::parse;
use super::*;

/// Keys the loader knows, and some it does not.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "bash",
            "mcp",
            "allow",
            "ask",
            "deny",
            "defaultMode",
            "mode",
            "additionalWritableDirs",
            "skill",
        ])
        .prop_map(str::to_string),
        "[a-zA-Z]{0,6}",
    ]
}

/// Pattern-like strings: prefixes, globs (valid or not), quotes, blanks.
fn pattern_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,5}( [a-z-]{1,5}){0,2}:\\*",
        "[a-z]{1,5} [a-z*?\\[\\]{},]{0,6}",
        "mcp:[a-z]{1,4}:[a-z_*]{0,6}",
        Just(":*".to_string()),
        Just("  ".to_string()),
        Just("'open quote:*".to_string()),
        Just("a[b".to_string()),
        Just("{a,b".to_string()),
        "\\PC{0,12}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        pattern_text().prop_map(Value::from),
        prop::sample::select(vec![
            "auto",
            "ask",
            "read-only",
            "yolo",
            "careful",
            "~",
            "~/d",
            "/abs/../x",
            "rel"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Words bash reads as syntax, or as a wrapper around the command that follows.
const KEYWORDS: [&str; 20] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "function", "select", "time", "coproc", "exec", "command", "builtin",
];

proptest! {
    #[test]
    fn any_json_loads_and_every_problem_names_its_key(permissions in json_value()) {
        let (rules, problems) = RuleSet::from_json(&permissions, "settings.json");
        let mut problems = problems;
        let _ = default_mode(&permissions, &mut problems);
        let dirs = writable_dirs(&permissions, Path::new("/home/u"), &mut problems);
        for p in &problems {
            prop_assert!(p.starts_with("permissions"), "{}", p);
            prop_assert!(p.contains(": "), "no reason given: {}", p);
        }
        for d in &dirs {
            prop_assert!(d.is_absolute() && normalize(d) == *d, "{:?}", d);
        }
        // Rules that loaded are usable on any command.
        for cmd in parse("git status; rm -rf x | mcp:fs:read").all_commands() {
            let _ = rules.bash_verdict(cmd);
        }
        let _ = rules.mcp_verdict("mcp:fs:read_file");
    }

    #[test]
    fn each_pattern_becomes_a_rule_or_one_problem(
        texts in prop::collection::vec(pattern_text(), 0..6),
        list in prop::sample::select(vec!["allow", "ask", "deny"]),
        section in prop::sample::select(vec!["bash", "mcp"]),
    ) {
        let permissions = json!({ section: { list: texts.clone() } });
        let (rules, problems) = RuleSet::from_json(&permissions, "settings.json");
        let bad: Vec<usize> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| Pattern::parse(t).is_err())
            .map(|(i, _)| i)
            .collect();
        prop_assert_eq!(problems.len(), bad.len(), "{:?}", problems);
        prop_assert_eq!(rules.is_empty(), bad.len() == texts.len());
        for (i, p) in bad.iter().zip(&problems) {
            let at = format!("permissions.{section}.{list}[{i}]: ");
            prop_assert!(p.starts_with(&at), "{}", p);
            let text = texts[*i].trim();
            prop_assert!(text.is_empty() || p.contains(text), "{} does not quote {:?}", p, text);
        }
    }

    #[test]
    fn a_prefix_rule_matches_what_it_spells_out(
        words in prop::collection::vec("[a-z][a-z0-9-]{0,5}".prop_filter("a shell keyword", |w| !KEYWORDS.contains(&w.as_str())), 1..4),
        extra in prop::collection::vec("[a-zA-Z0-9./=-]{1,6}", 0..3),
        suffix in "[a-z0-9]{1,3}",
    ) {
        let pattern = Pattern::parse(&format!("{}:*", words.join(" ")));
        prop_assert!(pattern.is_ok(), "{:?}", pattern);
        let Ok(pattern) = pattern else { return Ok(()) };
        let command = [words.clone(), extra].concat().join(" ");
        let matches = |text: &str| {
            parse(text).all_commands().next().is_some_and(|c| pattern.matches_command(c))
        };
        prop_assert!(matches(&command), "{} vs {}", pattern, command);
        prop_assert!(matches(&format!("/usr/bin/{command}")), "{} vs a path", pattern);
        let mut longer = words.clone();
        if let Some(last) = longer.last_mut() {
            last.push_str(&suffix);
        }
        prop_assert!(!matches(&longer.join(" ")), "{} matched {:?}", pattern, longer);
    }
}
