//! The decision table: every kind of action in every mode, with and without a sandbox, against
//! one rule set. Outcomes are written compactly: `A` allow, `A!` allow outside the sandbox,
//! `Q` ask, `Q!` ask and run outside the sandbox once approved, `D` deny.

mod agent_mcp;
mod native;

use serde_json::json;

use super::super::rules::RuleSet;
use super::super::test_support::ctx;
use super::*;

/// The rule set every table row is decided against.
fn rules() -> RuleSet {
    let (rules, problems) = RuleSet::from_json(
        &json!({
            "bash": {
                "allow": ["ls:*", "git status:*", "npm run *", "cargo install:*", "cp:*",
                          "write /data/y/*"],
                "ask": ["git push:*", "edit notes.md:*"],
                "deny": ["dd:*", "write /etc/passwd:*"]
            },
            "mcp": {
                "allow": ["mcp:gh:*"],
                "ask": ["mcp:slack:*"],
                "deny": ["mcp:fs:delete_file"]
            }
        }),
        "~/.synapse/settings.json",
    );
    assert!(problems.is_empty(), "{problems:?}");
    rules
}

fn code(decision: &Decision) -> &'static str {
    match decision {
        Decision::Allow {
            escalate: false, ..
        } => "A",
        Decision::Allow { escalate: true, .. } => "A!",
        Decision::Ask {
            escalate: false, ..
        } => "Q",
        Decision::Ask { escalate: true, .. } => "Q!",
        Decision::Deny { .. } => "D",
    }
}

/// The codes for one action in auto, ask, read-only, read-only with a sandbox, and yolo.
fn row(action: &Action) -> [&'static str; 5] {
    let rules = rules();
    let plain = ctx(false);
    let sandboxed = ctx(true);
    [
        code(&decide(action, Mode::Auto, &rules, &plain)),
        code(&decide(action, Mode::Ask, &rules, &plain)),
        code(&decide(action, Mode::ReadOnly, &rules, &plain)),
        code(&decide(action, Mode::ReadOnly, &rules, &sandboxed)),
        code(&decide(action, Mode::Yolo, &rules, &plain)),
    ]
}

fn reason(decision: Decision) -> String {
    match decision {
        Decision::Allow { note, .. } => note.unwrap_or_default(),
        Decision::Ask { reason, .. } | Decision::Deny { reason } => reason,
    }
}
