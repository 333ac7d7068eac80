//! Benchmark of the permission check with shell resolution (issue 16): a 4-part command line
//! judged against a session shell that holds aliases, functions, a `hash -p` entry and a
//! `DEBUG`-free state, next to the same line in a fresh shell. Goal: ≤ 50 µs per command.
//!
//! Run: `cargo bench -p synapse-tests --bench permissions` (add `--profile dev` for a quick,
//! unoptimised upper bound on a warm debug build).

// A benchmark is a test program: a broken setup should stop it loudly.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use synapse_permissions::{Action, Context, Mode, RuleSet, ShellState, decide_in_shell};

fn resolution(c: &mut Criterion) {
    let (rules, _) = RuleSet::from_json(
        &serde_json::json!({"bash": {"allow": ["git status:*", "npm run *"], "deny": ["rm:*"]}}),
        "bench",
    );
    // The agent commands a session shell defines, as the daemon's registry hands them in.
    let agent_commands = synapse_permissions::AgentCommands::new([
        "read", "write", "edit", "glob", "search", "skill", "todo",
    ]);
    let no_pids = |_: i32| false;
    let ctx = Context {
        cwd: Path::new("/home/u/proj"),
        home: Path::new("/home/u"),
        synapse_home: Path::new("/home/u/.synapse/skills"),
        temp_dir: Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &no_pids,
        agent_commands: &agent_commands,
    };
    let mut shell = ShellState::default();
    for line in [
        "shopt -s expand_aliases; alias ll='ls -la' gs='git status -s'",
        "mk() { make -j4 \"$@\"; }",
        "hash -p /usr/bin/grep g",
    ] {
        shell.record(line);
    }
    let command = "gs && g -rn TODO src | head -20 > todo.txt; echo $(date)";
    let fresh = ShellState::default();
    for (name, state) in [
        (
            "permission check with shell resolution, 4-part line (populated shell)",
            &shell,
        ),
        (
            "permission check with shell resolution, 4-part line (fresh shell)",
            &fresh,
        ),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| {
                black_box(decide_in_shell(
                    &Action::Native { command },
                    Mode::Auto,
                    &rules,
                    &ctx,
                    state,
                ))
            })
        });
    }
}

criterion_group!(benches, resolution);
criterion_main!(benches);
