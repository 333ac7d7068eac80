//! The command router's reading of a Bash-tool command string and the permission engine's
//! parse and decision for it, in every mode, with and without a sandbox: no input may panic,
//! and an agent command's words are always a simple command's.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use synapse_daemon::shell::syntax::{Route, classify, is_simple, split_heredoc};
use synapse_permissions::{Action, Context, Decision, Effect, Mode, RuleSet, decide, parse};

static RULES: LazyLock<RuleSet> = LazyLock::new(|| {
    let permissions = serde_json::json!({
        "bash": {
            "allow": ["ls:*", "git status:*", "npm run *", "cat"],
            "ask": ["git push:*"],
            "deny": ["dd:*", "rm -rf /"]
        },
        "mcp": {"allow": ["mcp:fs:read_*"], "deny": ["mcp:fs:delete_file"]}
    });
    RuleSet::from_json(&permissions, "fuzz").0
});

static EXTRA: LazyLock<Vec<PathBuf>> = LazyLock::new(|| vec![PathBuf::from("/data/x")]);

fn is_agent(word: &str) -> bool {
    matches!(
        word,
        "read" | "write" | "edit" | "glob" | "search" | "bash" | "todo" | "skill"
    ) || word.starts_with("task:")
}

fuzz_target!(|command: &str| {
    if let Route::Agent { words, stdin: None } = classify(command, is_agent) {
        assert!(is_simple(command.trim()) && words.first().is_some_and(|w| is_agent(w)));
    }
    let _ = split_heredoc(command);
    let parsed = parse(command);
    for cmd in parsed.all_commands() {
        let _ = (cmd.program(), cmd.writes());
    }
    // The agent commands a session shell defines, as the daemon's registry hands them in.
    let agent_commands = synapse_permissions::AgentCommands::new([
        "read", "write", "edit", "glob", "search", "skill", "todo",
    ]);
    for sandboxed in [false, true] {
        let ctx = Context {
            cwd: Path::new("/home/u/proj"),
            home: Path::new("/home/u"),
            synapse_home: Path::new("/home/u/.synapse"),
            temp_dir: Path::new("/tmp"),
            extra_writable: EXTRA.as_slice(),
            sandboxed,
            is_session_pid: &|pid| pid == 100,
            agent_commands: &agent_commands,
        };
        for mode in Mode::ALL {
            for action in [
                Action::Native { command },
                Action::Agent {
                    name: "bash",
                    command,
                    effect: Effect::Other,
                },
                Action::Mcp {
                    name: command,
                    read_only_hint: None,
                    destructive_hint: Some(true),
                },
            ] {
                if let Decision::Ask { reason, .. } | Decision::Deny { reason } =
                    decide(&action, mode, &RULES, &ctx)
                {
                    assert!(!reason.trim().is_empty());
                }
            }
        }
    }
});
