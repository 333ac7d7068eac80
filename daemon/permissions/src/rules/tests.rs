//! Rules from settings JSON: what loads, what becomes a problem message, and which rule wins.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::super::parse::parse;
use super::*;

fn first(command: &str) -> SimpleCommand {
    parse(command)
        .all_commands()
        .next()
        .cloned()
        .unwrap_or_default()
}

fn verdict(rules: &RuleSet, command: &str) -> Option<Verdict> {
    rules.bash_verdict(&first(command)).map(|(v, _)| v)
}

#[test]
fn lists_load_with_their_source() {
    let settings = json!({
        "bash": {"allow": ["git status:*", "npm run *"], "ask": ["git push:*"], "deny": ["rm -rf /"]},
        "mcp": {"allow": ["mcp:fs:read_*"], "deny": ["mcp:fs:delete_file"]},
        "skill": {"allow": ["whatever"]},
        "mode": "auto"
    });
    let (rules, problems) = RuleSet::from_json(&settings, "~/.synapse/settings.json");
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(verdict(&rules, "git status -s"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "npm run build"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "git push origin"), Some(Verdict::Ask));
    assert_eq!(verdict(&rules, "rm  -rf  /"), Some(Verdict::Deny));
    assert_eq!(verdict(&rules, "ls"), None);
    let (v, hit) = rules.bash_verdict(&first("git status")).unwrap();
    assert_eq!(v, Verdict::Allow);
    assert_eq!(
        hit,
        RuleHit {
            pattern: "git status:*".into(),
            source: "~/.synapse/settings.json".into(),
            via: None,
        }
    );
    assert_eq!(
        rules.mcp_verdict("mcp:fs:read_file").map(|(v, _)| v),
        Some(Verdict::Allow)
    );
    assert_eq!(
        rules.mcp_verdict("mcp:fs:delete_file").map(|(v, _)| v),
        Some(Verdict::Deny)
    );
    assert_eq!(rules.mcp_verdict("mcp:fs:write_file"), None);
}

#[test]
fn deny_wins_over_ask_over_allow() {
    let (rules, _) = RuleSet::from_json(
        &json!({"bash": {"allow": ["git:*"], "ask": ["git push:*"], "deny": ["git push --force:*"]}}),
        "s",
    );
    assert_eq!(verdict(&rules, "git log"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "git push"), Some(Verdict::Ask));
    assert_eq!(verdict(&rules, "git push --force"), Some(Verdict::Deny));
}

#[test]
fn bad_entries_become_problems_and_the_rest_still_load() {
    let settings = json!({
        "bash": {"allow": ["ls:*", 42, ":*", "echo 'x", "cat:*"], "maybe": [], "deny": "rm:*"},
        "mcp": ["mcp:x"]
    });
    let (rules, problems) = RuleSet::from_json(&settings, "project/.synapse/settings.json");
    assert_eq!(
        problems,
        [
            "permissions.bash.allow[1]: expected a pattern string such as \"git status:*\" (got 42)",
            "permissions.bash.allow[2]: `:*` has nothing before `:*` (expected a command such as \"git status:*\")",
            "permissions.bash.allow[3]: `echo 'x` has an unterminated quote",
            "permissions.bash.maybe: unknown key (expected allow, ask or deny)",
            "permissions.bash.deny: expected a list of patterns (got \"rm:*\")",
            "permissions.mcp: expected an object with allow, ask and deny lists (got a list)",
        ]
    );
    assert_eq!(verdict(&rules, "ls -la"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "cat f"), Some(Verdict::Allow));
    let (_, problems) = RuleSet::from_json(&json!("yes"), "s");
    assert_eq!(problems, ["permissions: expected an object (got \"yes\")"]);
    let (rules, problems) = RuleSet::from_json(&Value::Null, "s");
    assert!(problems.is_empty() && rules.is_empty());
}

#[test]
fn project_rules_merge_into_user_rules() {
    let (mut user, _) = RuleSet::from_json(&json!({"bash": {"allow": ["git status:*"]}}), "user");
    let (project, _) =
        RuleSet::from_json(&json!({"bash": {"deny": ["git status --x:*"]}}), "project");
    user.merge(project);
    assert_eq!(verdict(&user, "git status"), Some(Verdict::Allow));
    let (v, hit) = user.bash_verdict(&first("git status --x")).unwrap();
    assert_eq!((v, hit.source.as_str()), (Verdict::Deny, "project"));
    let mut added = RuleSet::new();
    added.add(
        RuleKind::Mcp,
        Verdict::Ask,
        Pattern::parse("mcp:gh:*").unwrap(),
        "cli",
    );
    assert_eq!(
        added.mcp_verdict("mcp:gh:create_issue").map(|(v, _)| v),
        Some(Verdict::Ask)
    );
}

#[test]
fn allow_rules_do_not_cover_unspelled_assignments() {
    let (rules, _) = RuleSet::from_json(
        &json!({"bash": {"allow": ["git log:*", "CI=1 make:*"], "deny": ["rm:*"]}}),
        "s",
    );
    assert_eq!(verdict(&rules, "git log"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "GIT_PAGER=sh git log"), None);
    assert_eq!(verdict(&rules, "CI=1 make test"), Some(Verdict::Allow));
    assert_eq!(verdict(&rules, "FOO=1 rm x"), Some(Verdict::Deny));
}

#[test]
fn writable_dirs_and_default_mode() {
    let home = Path::new("/home/u");
    let mut problems = Vec::new();
    let settings = json!({
        "additionalWritableDirs": ["/data/x", "~/scratch", "~", "relative", 7, "/a/../b"],
        "defaultMode": "read-only"
    });
    assert_eq!(
        writable_dirs(&settings, home, &mut problems),
        [
            PathBuf::from("/data/x"),
            PathBuf::from("/home/u/scratch"),
            PathBuf::from("/home/u"),
            PathBuf::from("/b"),
        ]
    );
    assert_eq!(default_mode(&settings, &mut problems), Some(Mode::ReadOnly));
    assert_eq!(
        problems,
        [
            "permissions.additionalWritableDirs[3]: expected an absolute path or one starting with ~/ (got \"relative\")",
            "permissions.additionalWritableDirs[4]: expected an absolute path or one starting with ~/ (got 7)",
        ]
    );
    let mut problems = Vec::new();
    assert_eq!(
        default_mode(&json!({"defaultMode": "careful"}), &mut problems),
        None
    );
    assert_eq!(
        default_mode(&json!({"mode": "yolo"}), &mut problems),
        Some(Mode::Yolo)
    );
    assert_eq!(
        default_mode(&json!({"defaultMode": true}), &mut problems),
        None
    );
    assert_eq!(default_mode(&json!({}), &mut problems), None);
    assert_eq!(
        writable_dirs(
            &json!({"additionalWritableDirs": "/x"}),
            home,
            &mut problems
        ),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        problems,
        [
            "permissions.defaultMode: unknown permission mode \"careful\" (expected auto, ask, read-only or yolo)",
            "permissions.defaultMode: expected one of \"auto\", \"ask\", \"read-only\", \"yolo\" (got true)",
            "permissions.additionalWritableDirs: expected a list of folders (got \"/x\")",
        ]
    );
}
