//! What a SIGKILLed daemon leaves behind is cleaned up: its session shells, what they started
//! and its MCP servers are killed by the next daemon of the same socket, and nothing of another
//! daemon is touched.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_support;

use serde_json::json;
use synapse_tests::{DEADLINE, TestEnv, pid_alive, processes_matching, wait_until};

fn sigkill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::SIGKILL,
    )
    .unwrap();
    wait_until(DEADLINE, "the killed daemon to go", || !pid_alive(pid));
}

#[test]
fn the_next_daemon_kills_what_a_killed_one_left_running() {
    let env = TestEnv::new();
    let other = TestEnv::new();
    let marker = format!("synapse-orphan-{}", std::process::id());
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({"mcpServers": {"py": {
        "command": mcp_support::venv_python(),
        // An -X option Python ignores, so the server can be found by name.
        "args": ["-X", format!("{marker}-mcp"), mcp_support::py_server(), "stdio"]
    }}});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    let first = env.start_daemon();
    // A background job of a session shell, named so it can be found.
    let started = env.cli(&[
        "exec",
        &format!("(exec -a {marker}-job sleep 300) & echo started"),
    ]);
    assert!(started.stdout.contains("started"), "{started:?}");
    // The same kind of job under another daemon must survive.
    other.start_daemon();
    let kept = other.cli(&[
        "exec",
        &format!("(exec -a {marker}-other sleep 300) & echo started"),
    ]);
    assert!(kept.stdout.contains("started"), "{kept:?}");
    wait_until(DEADLINE, "the job and the MCP server to run", || {
        !processes_matching(&format!("{marker}-job")).is_empty()
            && !processes_matching(&format!("{marker}-mcp")).is_empty()
    });

    sigkill(first);
    assert!(
        !processes_matching(&format!("{marker}-job")).is_empty(),
        "SIGKILL alone leaves the job running"
    );
    let second = env.start_daemon();
    assert_ne!(first, second);
    wait_until(DEADLINE, "the orphaned job to be killed", || {
        processes_matching(&format!("{marker}-job")).is_empty()
    });
    // The new daemon starts its own MCP server: exactly one runs again.
    wait_until(DEADLINE, "one MCP server", || {
        processes_matching(&format!("{marker}-mcp")).len() == 1
    });
    assert_eq!(
        processes_matching(&format!("{marker}-other")).len(),
        1,
        "another daemon's processes are left alone"
    );
    let log = std::fs::read_dir(env.home().join("logs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        log.contains("killed processes left by a daemon that died"),
        "{log}"
    );
    env.stop_daemon();
    other.stop_daemon();
}
