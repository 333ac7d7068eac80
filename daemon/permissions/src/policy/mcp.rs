//! MCP tool calls: rules on the `mcp:server:tool` name first, then the server's annotations.
//! A tool that claims to be read-only while its name says otherwise (`delete_file`) is not
//! taken at its word.

use super::super::rules::{RuleSet, Verdict};
use super::{Decision, Mode, allowed_by_rule, denied_by_rule};

/// Verbs in a tool name that mean it changes something.
const DESTRUCTIVE_VERBS: [&str; 14] = [
    "delete",
    "remove",
    "rm",
    "drop",
    "write",
    "kill",
    "destroy",
    "truncate",
    "move",
    "rename",
    "overwrite",
    "reset",
    "purge",
    "erase",
];

pub(super) fn decide(
    name: &str,
    read_only_hint: Option<bool>,
    destructive_hint: Option<bool>,
    mode: Mode,
    rules: &RuleSet,
) -> Decision {
    if let Some(hit) = rules.mcp_rule(Verdict::Deny, name) {
        return denied_by_rule(name, &hit);
    }
    if mode == Mode::Yolo {
        return Decision::Allow {
            escalate: true,
            note: None,
        };
    }
    let ask = |reason: String| Decision::Ask {
        reason,
        suggestion: name.to_string(),
        escalate: false,
    };
    let ask_rule = rules.mcp_rule(Verdict::Ask, name);
    let allow_rule = rules.mcp_rule(Verdict::Allow, name);
    let destructive = destructive_hint == Some(true);
    let claims_read_only = read_only_hint == Some(true) && !destructive;
    let verb = destructive_verb(name);
    let trusted_read_only = claims_read_only && verb.is_none();
    let doubt = || match verb {
        Some(v) if claims_read_only => {
            format!("`{name}` claims to be read-only but its name says `{v}`")
        }
        _ if destructive => format!("`{name}` is marked destructive by its server"),
        _ => format!("`{name}` is not marked read-only by its server"),
    };
    if let Some(hit) = ask_rule {
        if mode == Mode::ReadOnly && !(allow_rule.is_some() || trusted_read_only) {
            return Decision::Deny {
                reason: format!("read-only mode: {}", doubt()),
            };
        }
        return ask(format!(
            "`{name}` matches the ask rule `{}` from {}",
            hit.pattern, hit.source
        ));
    }
    if let Some(hit) = allow_rule {
        return Decision::Allow {
            escalate: false,
            note: Some(allowed_by_rule(&hit)),
        };
    }
    let allow = Decision::Allow {
        escalate: false,
        note: None,
    };
    match mode {
        Mode::Auto if destructive || (claims_read_only && verb.is_some()) => ask(doubt()),
        Mode::Auto => allow,
        _ if trusted_read_only => allow,
        Mode::ReadOnly => Decision::Deny {
            reason: format!("read-only mode: {}", doubt()),
        },
        _ => ask(format!("ask mode: {}", doubt())),
    }
}

/// The destructive verb in the tool part of the name (after the last `:`), if any: a word of
/// the name (split at `_`, `-`, `.`, spaces and camelCase) that is a verb, or starts with one
/// of the longer verbs (`deleteFile`, `writes`).
pub(super) fn destructive_verb(name: &str) -> Option<&'static str> {
    let tool = name.rsplit(':').next().unwrap_or(name);
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in tool.chars() {
        if !c.is_alphanumeric() {
            words.push(std::mem::take(&mut current));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    words.push(current);
    words.iter().filter(|w| !w.is_empty()).find_map(|w| {
        DESTRUCTIVE_VERBS
            .iter()
            .find(|v| w == *v || (v.len() >= 4 && w.starts_with(*v)))
            .copied()
    })
}
