//! Agent commands by their declared effect, and MCP tools by their annotations and names.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::super::mcp::destructive_verb;
use super::*;

fn agent<'a>(name: &'a str, command: &'a str, effect: Effect) -> Action<'a> {
    Action::Agent {
        name,
        command,
        effect,
    }
}

fn writes(path: &str) -> Effect {
    Effect::Writes(vec![PathBuf::from(path)])
}

#[test]
fn agent_decision_table() {
    let table: Vec<(Action, [&str; 5])> = vec![
        // columns: auto, ask, read-only, read-only with a sandbox, yolo
        (
            agent("read", "read src/main.rs", Effect::ReadOnly),
            ["A", "A", "A", "A", "A!"],
        ),
        (
            agent("write", "write a.txt", writes("/home/u/proj/a.txt")),
            ["A", "Q", "D", "D", "A!"],
        ),
        (
            agent("write", "write /etc/hosts", writes("/etc/hosts")),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            agent("write", "write /data/y/f", writes("/data/y/f")),
            ["A", "A", "D", "D", "A!"],
        ),
        (
            agent("write", "write /etc/passwd", writes("/etc/passwd")),
            ["D", "D", "D", "D", "D"],
        ),
        (
            agent("edit", "edit notes.md", writes("/home/u/proj/notes.md")),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            agent(
                "task:explore",
                "task:explore --prompt x",
                Effect::SubAgent { read_only: true },
            ),
            ["A", "A", "A", "A", "A!"],
        ),
        (
            agent(
                "task:general",
                "task:general --prompt x",
                Effect::SubAgent { read_only: false },
            ),
            ["A", "A", "D", "D", "A!"],
        ),
        (
            agent("todo", "todo add x", Effect::Other),
            ["A", "Q", "D", "D", "A!"],
        ),
        (agent("ls", "ls", Effect::Other), ["A", "A", "A", "A", "A!"]),
    ];
    for (action, expected) in &table {
        assert_eq!(row(action), *expected, "{action:?}");
    }
}

#[test]
fn agent_reasons_and_suggestions() {
    let rules = rules();
    let plain = ctx(false);
    let outside = decide(
        &agent("write", "write /etc/hosts", writes("/etc/hosts")),
        Mode::Auto,
        &rules,
        &plain,
    );
    assert_eq!(
        outside,
        Decision::Ask {
            reason: "`write` writes outside the writable folders: /etc/hosts".into(),
            suggestion: "write /etc/hosts:*".into(),
            escalate: false,
        }
    );
    let sub = decide(
        &agent(
            "task:general",
            "task:general --prompt x",
            Effect::SubAgent { read_only: false },
        ),
        Mode::ReadOnly,
        &rules,
        &plain,
    );
    assert_eq!(
        reason(sub),
        "read-only mode: sub-agents run as task:explore only"
    );
    let other = decide(
        &agent("todo", "todo add x", Effect::Other),
        Mode::Ask,
        &rules,
        &plain,
    );
    assert!(
        matches!(other, Decision::Ask { ref suggestion, .. } if suggestion == "todo add:*"),
        "{other:?}"
    );
    for (name, command, expected) in [
        ("skill", "skill search \"csv report\"", "skill search:*"),
        ("job", "job start 'make all'", "job start:*"),
        ("todo", "todo list", "todo:*"),
        ("task:general", "task:general --prompt x", "task:general:*"),
    ] {
        let asked = decide(
            &agent(name, command, Effect::Other),
            Mode::Ask,
            &rules,
            &plain,
        );
        assert!(
            matches!(&asked, Decision::Ask { suggestion, .. } if suggestion == expected),
            "{command}: {asked:?}"
        );
    }
}

#[test]
fn mcp_decision_table() {
    let mcp = |name, read_only_hint, destructive_hint| Action::Mcp {
        name,
        read_only_hint,
        destructive_hint,
    };
    let table = [
        // columns: auto, ask, read-only, read-only with a sandbox, yolo
        (
            mcp("mcp:fs:read_file", Some(true), None),
            ["A", "A", "A", "A", "A!"],
        ),
        (mcp("mcp:fs:list", None, None), ["A", "Q", "D", "D", "A!"]),
        (
            mcp("mcp:fs:list", Some(false), Some(false)),
            ["A", "Q", "D", "D", "A!"],
        ),
        (
            mcp("mcp:db:query", None, Some(true)),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            mcp("mcp:fs:delete_all", Some(true), None),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            mcp("mcp:fs:stat", Some(true), Some(true)),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            mcp("mcp:gh:create_issue", None, None),
            ["A", "A", "A", "A", "A!"],
        ),
        (
            mcp("mcp:slack:post", Some(true), None),
            ["Q", "Q", "Q", "Q", "A!"],
        ),
        (
            mcp("mcp:slack:post", None, None),
            ["Q", "Q", "D", "D", "A!"],
        ),
        (
            mcp("mcp:fs:delete_file", Some(true), Some(false)),
            ["D", "D", "D", "D", "D"],
        ),
    ];
    for (action, expected) in &table {
        assert_eq!(row(action), *expected, "{action:?}");
    }
    let rules = rules();
    let liar = decide(
        &mcp("mcp:fs:removeItem", Some(true), None),
        Mode::Auto,
        &rules,
        &ctx(false),
    );
    assert_eq!(
        liar,
        Decision::Ask {
            reason: "`mcp:fs:removeItem` claims to be read-only but its name says `remove`".into(),
            suggestion: "mcp:fs:removeItem".into(),
            escalate: false,
        }
    );
    let denied = decide(
        &mcp("mcp:fs:delete_file", None, None),
        Mode::Yolo,
        &rules,
        &ctx(false),
    );
    assert_eq!(
        reason(denied),
        "`mcp:fs:delete_file` matches the deny rule `mcp:fs:delete_file` from ~/.synapse/settings.json"
    );
}

#[test]
fn destructive_verbs_are_words_of_the_tool_name() {
    let cases = [
        ("mcp:fs:delete_file", Some("delete")),
        ("mcp:fs:deleteFile", Some("delete")),
        ("mcp:fs:DeleteFile", Some("delete")),
        ("mcp:k8s:rm", Some("rm")),
        ("mcp:db:drop-table", Some("drop")),
        ("mcp:fs:writes", Some("write")),
        ("mcp:x:get_kill_switch", Some("kill")),
        ("mcp:fs:read_file", None),
        ("mcp:forms:form_fill", None),
        ("mcp:delete:list", None),
        ("mcp:fs:list_directory", None),
    ];
    for (name, verb) in cases {
        assert_eq!(destructive_verb(name), verb, "{name}");
    }
}
