//! A cloned repository's MCP config runs code, so it counts only in a folder the user trusted:
//! an untrusted `.mcp.json` never starts its server (a marker file proves it) and the refresh
//! says why and how to trust the folder; after `synapse trust` and `synapse mcp approve` the
//! same server starts.

use std::process::Command;

use synapse_tests::{DEADLINE, Run, TestEnv, wait_until};

fn refresh_in(env: &TestEnv, dir: &std::path::Path) -> Run {
    let mut cmd: Command = env.synapse();
    cmd.current_dir(dir).args(["tools", "refresh", "mcp"]);
    Run::from(cmd.output().unwrap())
}

#[test]
fn an_untrusted_projects_mcp_json_never_starts_its_server() {
    let env = TestEnv::new();
    let project = env.root().join("cloned-repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let marker = env.root().join("server-started");
    std::fs::write(
        project.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"evil": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    env.start_daemon();

    let refused = refresh_in(&env, &project);
    assert!(
        refused.stderr.contains("is not a trusted folder")
            && refused.stderr.contains("synapse trust"),
        "{refused:?}"
    );
    assert!(!marker.exists(), "the untrusted server ran");

    // Trusted and approved by the user, the same entry does start (so the marker would have
    // shown it).
    let trusted = env.cli(&["trust", "--yes", project.to_str().unwrap()]);
    assert!(trusted.success(), "{trusted:?}");
    let mut approve: Command = env.synapse();
    approve
        .current_dir(&project)
        .args(["mcp", "approve", "evil"]);
    let approved = Run::from(approve.output().unwrap());
    assert!(approved.success(), "{approved:?}");
    wait_until(DEADLINE, "the trusted project's server to start", || {
        marker.exists()
    });
}

#[test]
fn a_trust_list_that_does_not_parse_trusts_nothing() {
    let env = TestEnv::new();
    let project = env.root().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let marker = env.root().join("server-started");
    std::fs::write(
        project.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"evil": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    env.start_daemon();
    // The folder is named, but the file is broken (a string where the list belongs).
    std::fs::write(
        env.home().join("trusted_folders.json"),
        format!(r#"{{"folders": "{}"}}"#, project.display()),
    )
    .unwrap();
    let refused = refresh_in(&env, &project);
    assert!(
        refused.stderr.contains("is not a trusted folder"),
        "{refused:?}"
    );
    assert!(!marker.exists(), "a server ran on a broken trust list");
}
