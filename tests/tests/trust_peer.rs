//! Issue 16, the dead-peer escape: a sandboxed command connects to the daemon, lets the
//! connecting process exit, and sends `Tools.Exec` from a child. The daemon decides at accept
//! time, so the call is refused; the same raw call from the (unsandboxed) user runs, which
//! proves the raw call itself is sound. Trusting a folder goes through the daemon too, so a
//! sandboxed agent cannot trust the repository it works in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{TestEnv, bin};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/trust_support/dead_peer.py")
}

fn landlock() -> bool {
    let out = Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    out.status.success()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_connecting_process_exited_is_refused_as_sandboxed() {
    if !landlock() {
        eprintln!("Landlock is not available here: the dead-peer escape cannot be staged");
        return;
    }
    let env = TestEnv::new();
    env.start_daemon();
    let tmp = env.root().join("tmp");
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let socket = env.paths().socket().display().to_string();

    // The user's own raw call (no sandbox) runs: the marker appears, the reply carries output.
    let by_user = outside.join("by-user.txt");
    let reply = env.root().join("user-reply.bin");
    let out = Command::new("python3")
        .arg(script())
        .args([
            &socket,
            &format!("echo ran > {} && echo user-call-ran", by_user.display()),
            &reply.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(by_user.exists(), "the control call did not run: {out:?}");
    let bytes = std::fs::read(&reply).unwrap();
    assert!(
        String::from_utf8_lossy(&bytes).contains("user-call-ran"),
        "{bytes:?}"
    );

    // The same call staged from inside the agent's sandboxed shell is refused.
    let escaped = outside.join("escaped.txt");
    let agent_reply = env.root().join("agent-reply.bin");
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!(
                "python3 {} {socket} 'echo x > {} && echo agent-call-ran' {} | cat; echo staged",
                script().display(),
                escaped.display(),
                agent_reply.display()
            ))
            .text("tried"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", &tmp)
        .args(["run", "--yes", "do the task"]);
    let run = synapse_tests::run_async(cmd).await;
    assert!(run.success(), "{run:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(result.contains("staged"), "{result}");
    assert!(
        !escaped.exists(),
        "the dead peer escaped the sandbox: {result}"
    );
    let bytes = std::fs::read(&agent_reply).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&bytes).contains("agent-call-ran"),
        "{bytes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_refresh_mcp_servers() {
    if !landlock() {
        eprintln!("Landlock is not available here: no sandboxed shell to test from");
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    let marker = env.root().join("pwned-server-started");
    // A project server entry the sandboxed agent could have written.
    std::fs::write(
        env.workdir().join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"evil": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    let synapse = bin("synapse").display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("S={synapse}; $S tools refresh mcp; echo tried"))
            .text("tried"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", env.root().join("tmp"))
        .args(["run", "--yes", "do the task"]);
    let run = synapse_tests::run_async(cmd).await;
    assert!(run.success(), "{run:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains(
            "refreshing MCP servers is not available from inside a sandboxed agent shell"
        ),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_trust_a_folder_but_may_list_them() {
    if !landlock() {
        eprintln!("Landlock is not available here: no sandboxed shell to test from");
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    let synapse = bin("synapse").display().to_string();
    let work = env.workdir().display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!(
                "S={synapse}; $S trust {work}; $S trust --list && echo listed"
            ))
            .text("tried"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.env("TMPDIR", env.root().join("tmp"))
        .args(["run", "--yes", "do the task"]);
    let run = synapse_tests::run_async(cmd).await;
    assert!(run.success(), "{run:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains(
            "changing the trusted folders is not available from inside a sandboxed agent shell"
        ),
        "{result}"
    );
    assert!(result.contains("listed"), "listing still works: {result}");
    let list = env.cli(&["trust", "--list"]);
    assert!(
        !list.stdout.contains(&work),
        "the agent trusted its folder: {list:?}"
    );
    // The user's own `synapse trust` goes through the same daemon call and counts.
    let own = env.cli(&["trust", &work]);
    assert!(own.success() && own.stdout.contains("Trusted:"), "{own:?}");
}
