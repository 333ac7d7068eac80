//! Issue 16, project MCP servers need the user's approval of each entry, pinned by content,
//! through the real daemon: in a trusted folder an unapproved server never starts (a marker
//! file proves it), `synapse mcp list` and `synapse run` say it needs approval and how to give
//! it, `synapse mcp approve` starts it, a changed entry is held again, approvals live in
//! SYNAPSE_HOME (never in the project), and a sandboxed agent cannot approve.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{DEADLINE, Run, TestEnv, bin, wait_until};

/// A trusted project whose `.mcp.json` names a server `evil` that touches `marker` when started.
fn trusted_project(env: &TestEnv, marker: &Path) -> PathBuf {
    let project = env.root().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    write_server(&project, marker);
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    project
}

fn write_server(project: &Path, marker: &Path) {
    std::fs::write(
        project.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"evil": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
}

fn synapse_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let mut cmd: Command = env.synapse();
    cmd.current_dir(dir).args(args);
    Run::from(cmd.output().unwrap())
}

#[test]
fn a_trusted_projects_server_starts_only_once_approved_and_again_after_a_change() {
    let env = TestEnv::new();
    let marker = env.root().join("started-1");
    env.start_daemon();
    let project = trusted_project(&env, &marker);

    let refresh = synapse_in(&env, &project, &["tools", "refresh", "mcp"]);
    assert!(
        refresh.stderr.contains("needs approval")
            && refresh.stderr.contains("synapse mcp approve evil"),
        "{refresh:?}"
    );
    let list = synapse_in(&env, &project, &["mcp", "list"]);
    let shown = format!("{}{}", list.stdout, list.stderr);
    assert!(
        shown.contains("evil") && shown.contains("needs approval"),
        "{shown}"
    );
    assert!(!marker.exists(), "an unapproved project server ran");

    let approved = synapse_in(&env, &project, &["mcp", "approve", "evil"]);
    assert!(
        approved.success() && approved.stdout.contains("Approved: evil"),
        "{approved:?}"
    );
    wait_until(DEADLINE, "the approved server to start", || marker.exists());
    let store = env.home().join("mcp").join("approved_servers.json");
    assert!(std::fs::read_to_string(&store).unwrap().contains("evil"));
    assert!(
        !project.join(".synapse").exists(),
        "approvals are never written into the project"
    );

    // The entry changes (by the agent, a `git pull`, anyone): it is held until approved again.
    let changed_marker = env.root().join("started-2");
    write_server(&project, &changed_marker);
    let refresh = synapse_in(&env, &project, &["tools", "refresh", "mcp"]);
    assert!(
        refresh.stderr.contains("changed since it was approved"),
        "{refresh:?}"
    );
    assert!(
        !changed_marker.exists(),
        "a changed server ran without approval"
    );
    let again = synapse_in(&env, &project, &["mcp", "approve", "--all"]);
    assert!(again.success(), "{again:?}");
    wait_until(DEADLINE, "the re-approved server to start", || {
        changed_marker.exists()
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_never_starts_an_unapproved_server_and_says_how_to_approve() {
    let env = TestEnv::new();
    let marker = env.root().join("started");
    let project = trusted_project(&env, &marker);
    let fake = FakeLlm::start(Script::new().text("hello")).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.current_dir(&project).args(["run", "hi"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stderr.contains("needs approval") && out.stderr.contains("synapse mcp approve evil"),
        "{out:?}"
    );
    assert!(!marker.exists(), "run started an unapproved server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_agent_cannot_approve_a_server() {
    let env = TestEnv::new();
    let probe = std::process::Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    if !probe.status.success() {
        return;
    }
    let marker = env.root().join("started");
    let project = trusted_project(&env, &marker);
    let synapse = bin("synapse").display().to_string();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(format!("S={synapse}; $S mcp approve --all"))
            .text("tried"),
    )
    .await
    .unwrap();
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.current_dir(&project)
        .env("TMPDIR", env.root().join("tmp"))
        .args(["run", "--yes", "approve the servers"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    let result = fake.requests()[1].last_tool_result().unwrap();
    assert!(
        result.contains("not available from inside a sandboxed agent shell"),
        "{result}"
    );
    assert!(
        !marker.exists(),
        "a sandboxed agent approved and started a server"
    );
    assert!(
        !env.home()
            .join("mcp")
            .join("approved_servers.json")
            .exists()
    );
}
