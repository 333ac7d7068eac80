//! Benchmarks of the Bash tool (issue 3). Goals: in-process `read` of a 100-line file ≤ 0.3 ms,
//! `echo` through the persistent shell p50 ≤ 1 ms, `synapse exec "echo hi"` against a warm
//! daemon ≤ 10 ms; a fresh `bash -c` per call is the baseline. Issue 17: `read` through a pipeline
//! (agent channel) against the same `read` on the in-process fast path.
//!
//! Run: `cargo build --release -p synapse-client -p synapse-daemon && cargo bench -p synapse-tests --bench shell`
//! (the whole-process benchmark drives the release `synapse`/`synapsed` binaries).

// A benchmark is a test program: a broken setup should stop it loudly.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::process::Command;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use synapse_daemon::shell::{SessionOrigin, ShellSessions, ToolCall, builtin_registry};
use synapse_tests::TestEnv;
use tokio_util::sync::CancellationToken;

fn call(command: &str) -> ToolCall {
    ToolCall {
        command: command.into(),
        ..Default::default()
    }
}

fn in_process(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=100)
        .map(|i| format!("line {i}: some typical source text here\n"))
        .collect();
    std::fs::write(dir.path().join("f.txt"), text).unwrap();
    let sessions = ShellSessions::new(Arc::new(builtin_registry()), None);
    let origin = SessionOrigin {
        cwd: dir.path().to_path_buf(),
        env: Vec::new(),
        sandbox: None,
        workspace: None,
        private_tmp: None,
        spare_tmp: None,
    };
    let cancel = CancellationToken::new();
    let run = |command: &str| {
        let result = rt
            .block_on(sessions.execute("bench", &origin, &call(command), &cancel))
            .unwrap();
        assert_eq!(result.exit_code, 0, "{}", result.output);
        result
    };
    // Start the shell before measuring.
    run("true");

    c.bench_function("read 100-line file (in-process, through the router)", |b| {
        b.iter(|| black_box(run("read f.txt")))
    });
    c.bench_function("echo through the persistent shell", |b| {
        b.iter(|| black_box(run("echo hi")))
    });
    c.bench_function("echo through a fresh bash -c (baseline)", |b| {
        b.iter(|| {
            let out = Command::new("bash")
                .args(["--noprofile", "--norc", "-c", "echo hi"])
                .output()
                .unwrap();
            black_box(out)
        })
    });
    rt.block_on(sessions.close_all());
}

/// Issue 17: an agent command inside a pipeline goes through the session shell, the
/// `synapsed __agent` helper and the agent channel; the same `read` as a simple command takes
/// the in-process fast path.
fn agent_channel(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), text).unwrap();
    let sessions = rt.block_on(async {
        ShellSessions::new(Arc::new(builtin_registry()), None)
            .with_agent_channel(
                dir.path().join("agent.sock"),
                synapse_tests::bin("synapsed"),
            )
            .unwrap()
    });
    let origin = SessionOrigin {
        cwd: dir.path().to_path_buf(),
        env: Vec::new(),
        sandbox: None,
        workspace: None,
        private_tmp: None,
        spare_tmp: None,
    };
    let cancel = CancellationToken::new();
    let run = |command: &str| {
        let result = rt
            .block_on(sessions.execute("bench", &origin, &call(command), &cancel))
            .unwrap();
        assert_eq!(result.exit_code, 0, "{}", result.output);
        result
    };
    assert!(run("read f.txt | wc -l").output.starts_with("100"));
    c.bench_function("read f.txt (fast path)", |b| {
        b.iter(|| black_box(run("read f.txt")))
    });
    c.bench_function("read f.txt piped to cat (agent channel)", |b| {
        b.iter(|| black_box(run("read f.txt | cat")))
    });
    rt.block_on(sessions.close_all());
}

fn whole_process(c: &mut Criterion) {
    let env = TestEnv::new();
    env.start_daemon();
    let exec = || {
        let out = env.synapse().args(["exec", "echo hi"]).output().unwrap();
        assert_eq!(out.stdout, b"hi\n");
    };
    exec();
    c.bench_function(
        "synapse exec \"echo hi\" (whole process, warm daemon)",
        |b| b.iter(exec),
    );
}

/// The permission check every model command passes (parse into simple commands, rules, risky
/// list, writes): what the gate adds before a command runs.
fn permission_check(c: &mut Criterion) {
    use synapse_permissions::{Action, Context, Mode, RuleSet, decide};
    let (rules, _) = RuleSet::from_json(
        &serde_json::json!({"bash": {"allow": ["git status:*", "npm run *"], "deny": ["rm -rf /:*"]}}),
        "bench",
    );
    let cwd = std::path::Path::new("/home/u/proj");
    // The agent commands a session shell defines, as the daemon's registry hands them in.
    let agent_commands = synapse_permissions::AgentCommands::new([
        "read", "write", "edit", "glob", "search", "skill", "todo",
    ]);
    let no_pids = |_: i32| false;
    let ctx = Context {
        cwd,
        home: std::path::Path::new("/home/u"),
        synapse_home: std::path::Path::new("/home/u/.synapse/skills"),
        temp_dir: std::path::Path::new("/tmp"),
        extra_writable: &[],
        sandboxed: true,
        is_session_pid: &no_pids,
        agent_commands: &agent_commands,
    };
    let command = "git status -s && grep -rn TODO src | head -20 > todo.txt; echo $(date)";
    c.bench_function(
        "permission check of a 4-part command line (auto mode)",
        |b| {
            b.iter(|| {
                black_box(decide(
                    &Action::Native { command },
                    Mode::Auto,
                    &rules,
                    &ctx,
                ))
            })
        },
    );
}

criterion_group!(
    benches,
    in_process,
    agent_channel,
    whole_process,
    permission_check
);
criterion_main!(benches);
