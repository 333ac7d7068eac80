//! Issue 31, MCP config and state, through the real daemon: every configured server is listed —
//! from all six sources, in an untrusted, a trusted and an approved folder — with its state and
//! the one command that enables it; `synapse trust` and approvals count at the very next call; a
//! `~/.claude.json` project entry needs approval like the project's own files; a project
//! server keeps the environment it was opened with when a second terminal with another one calls
//! it (same process, both calls succeed, the difference reported); a legacy SSE entry is refused
//! naming the server and its Streamable HTTP URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

use crate::mcp_support::{py_server, venv_python};

/// A stdio entry running the Python fixture server.
fn py_entry() -> Value {
    json!({"command": venv_python(), "args": [py_server(), "stdio"]})
}

fn synapse_in(env: &TestEnv, dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.current_dir(dir).args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// `synapse mcp list --json` in `dir`: the servers by name, and the whole output.
fn listed(env: &TestEnv, dir: &Path, vars: &[(&str, &str)]) -> (Vec<Value>, Run) {
    let out = synapse_in(env, dir, vars, &["mcp", "list", "--json"]);
    assert!(out.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    (doc["servers"].as_array().unwrap().clone(), out)
}

fn server<'a>(servers: &'a [Value], name: &str) -> &'a Value {
    servers
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed: {servers:#?}"))
}

/// A project with a server in each project source, and the user's servers in each user source.
fn six_sources(env: &TestEnv) -> PathBuf {
    let project = env.workdir().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    let write = |path: PathBuf, doc: Value| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, doc.to_string()).unwrap();
    };
    write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"dotmcp": py_entry()}}),
    );
    write(
        project.join(".vscode/mcp.json"),
        json!({"servers": {"vscode": py_entry()}}),
    );
    write(
        env.user_home().join(".claude.json"),
        json!({
            "mcpServers": {"claudeuser": py_entry()},
            "projects": {project.display().to_string(): {"mcpServers": {"claudeproj": py_entry()}}},
        }),
    );
    write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"mine": py_entry()}}),
    );
    std::fs::create_dir_all(env.user_home().join(".codex")).unwrap();
    std::fs::write(
        env.user_home().join(".codex/config.toml"),
        format!(
            "[mcp_servers.codexsrv]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
            venv_python().display().to_string(),
            py_server().display().to_string()
        ),
    )
    .unwrap();
    project
}

const PROJECT_SERVERS: [&str; 3] = ["dotmcp", "vscode", "claudeproj"];
const USER_SERVERS: [&str; 3] = ["mine", "claudeuser", "codexsrv"];

#[test]
fn every_source_is_listed_with_its_state_and_the_command_that_enables_it() {
    let env = TestEnv::new();
    let project = six_sources(&env);
    env.start_daemon();

    // Untrusted: every project server is listed, never started, with `synapse trust DIR`.
    let (servers, out) = listed(&env, &project, &[]);
    for name in PROJECT_SERVERS {
        let s = server(&servers, name);
        assert_eq!(s["state"], "untrusted", "{s}");
        assert_eq!(s["scope"], "project", "{s}");
        let reason = s["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("untrusted — synapse trust {}", project.display())),
            "{reason}"
        );
        assert!(s["pid"].is_null(), "an untrusted server ran: {s}");
    }
    for name in USER_SERVERS {
        assert_eq!(server(&servers, name)["scope"], "user");
    }
    let table = synapse_in(&env, &project, &[], &["mcp", "list"]);
    assert!(
        !table.stdout.contains("No MCP servers configured") && table.stdout.contains("vscode"),
        "{table:?} {out:?}"
    );

    // Trusted: the very next listing says what is left to do — approval, for every project
    // source, the `~/.claude.json` entry too.
    let trusted = synapse_in(&env, &project, &[], &["trust", "--yes", "."]);
    assert!(trusted.success(), "{trusted:?}");
    let (servers, out) = listed(&env, &project, &[]);
    assert!(
        !out.stdout.contains("not a trusted folder") && !out.stderr.contains("not a trusted"),
        "a stale listing after `synapse trust`: {out:?}"
    );
    for name in PROJECT_SERVERS {
        let s = server(&servers, name);
        assert_eq!(s["state"], "needs-approval", "{s}");
        assert!(
            s["reason"]
                .as_str()
                .unwrap()
                .starts_with(&format!("needs approval — synapse mcp approve {name}")),
            "{s}"
        );
    }

    // Approved: connected (the claude.json entry only now).
    let approved = synapse_in(&env, &project, &[], &["mcp", "approve", "--all"]);
    assert!(approved.success(), "{approved:?}");
    wait_until(DEADLINE, "every server to connect", || {
        let (servers, _) = listed(&env, &project, &[]);
        PROJECT_SERVERS
            .iter()
            .chain(USER_SERVERS.iter())
            .all(|n| server(&servers, n)["state"] == "ready")
    });

    // A changed entry is held — never shown as connecting — until approved again.
    let mut changed = py_entry();
    changed["env"] = json!({"EXTRA": "1"});
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"dotmcp": changed}}).to_string(),
    )
    .unwrap();
    let (servers, _) = listed(&env, &project, &[]);
    let s = server(&servers, "dotmcp");
    assert_eq!(s["state"], "held", "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .starts_with("held: changed since approved — synapse mcp approve dotmcp"),
        "{s}"
    );
    let table = synapse_in(&env, &project, &[], &["mcp", "list"]);
    let line = table
        .stdout
        .lines()
        .find(|l| l.starts_with("dotmcp "))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("held") && !line.contains("connecting"),
        "{table:?}"
    );
    let call = synapse_in(
        &env,
        &project,
        &[],
        &["mcp", "call", "dotmcp", "echo", "hi"],
    );
    assert_eq!(call.code, Some(3), "{call:?}");
    assert!(
        call.stderr.contains("synapse mcp approve dotmcp"),
        "{call:?}"
    );
    let resources = synapse_in(&env, &project, &[], &["mcp", "resources", "dotmcp"]);
    assert!(
        resources.code == Some(3) && resources.stderr.contains("synapse mcp approve dotmcp"),
        "{resources:?}"
    );
}

#[test]
fn a_claude_json_project_entry_never_starts_without_approval() {
    let env = TestEnv::new();
    let project = env.workdir().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let marker = env.root().join("started");
    std::fs::write(
        env.user_home().join(".claude.json"),
        json!({"projects": {project.display().to_string(): {"mcpServers": {
            "fromclaude": {"command": "touch", "args": [marker]},
        }}}})
        .to_string(),
    )
    .unwrap();
    env.start_daemon();
    let trusted = synapse_in(&env, &project, &[], &["trust", "--yes", "."]);
    assert!(trusted.success(), "{trusted:?}");
    let refresh = synapse_in(&env, &project, &[], &["tools", "refresh", "mcp"]);
    assert!(
        refresh
            .stderr
            .contains("needs approval — synapse mcp approve fromclaude"),
        "{refresh:?}"
    );
    assert!(
        !marker.exists(),
        "a ~/.claude.json project entry ran unapproved"
    );
    let shown = synapse_in(&env, &project, &[], &["mcp", "get", "fromclaude"]);
    assert!(
        shown.stdout.contains("state:     needs-approval")
            && shown.stdout.contains("scope:     project")
            && shown.stdout.contains("\"command\": \"touch\""),
        "{shown:?}"
    );
    let approved = synapse_in(&env, &project, &[], &["mcp", "approve", "fromclaude"]);
    assert!(approved.success(), "{approved:?}");
    wait_until(DEADLINE, "the approved entry to start", || marker.exists());
}

#[test]
fn a_project_server_keeps_the_environment_it_was_opened_with() {
    let env = TestEnv::new();
    let project = env.workdir().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let mut entry = py_entry();
    entry["env"] = json!({"TAG": "${PROJ_TAG}"});
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {"proj": entry}}).to_string(),
    )
    .unwrap();
    env.start_daemon();
    let first = [("PROJ_TAG", "first")];
    let second = [("PROJ_TAG", "second")];
    assert!(synapse_in(&env, &project, &first, &["trust", "--yes", "."]).success());
    let approved = synapse_in(&env, &project, &first, &["mcp", "approve", "proj"]);
    assert!(approved.success(), "{approved:?}");
    let got = synapse_in(
        &env,
        &project,
        &first,
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(got.stdout.trim(), "first", "{got:?}");
    let pid_of =
        |vars: &[(&str, &str)]| server(&listed(&env, &project, vars).0, "proj")["pid"].clone();
    let pid = pid_of(&first);
    assert!(pid.is_u64(), "{pid}");

    // A call in flight from the first terminal while a second one, with another environment,
    // lists and calls: nothing restarts, both succeed.
    let slow = {
        let mut cmd = env.synapse();
        cmd.current_dir(&project)
            .env("PROJ_TAG", "first")
            .args(["mcp", "call", "proj", "wait_ms", "1500"]);
        std::thread::spawn(move || run(&mut cmd))
    };
    let out = synapse_in(&env, &project, &second, &["mcp", "list"]);
    assert!(
        out.stderr.contains("note: ")
            && out.stderr.contains("${PROJ_TAG}")
            && out.stderr.contains("synapse mcp refresh"),
        "the other environment is reported: {out:?}"
    );
    let other = synapse_in(
        &env,
        &project,
        &second,
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert!(other.success(), "{other:?}");
    assert_eq!(other.stdout.trim(), "first", "{other:?}");
    let slow = slow.join().unwrap();
    assert!(slow.success(), "the call in flight failed: {slow:?}");
    assert_eq!(pid_of(&second), pid, "the project's server restarted");

    // The user's own refresh applies their environment.
    let refreshed = synapse_in(&env, &project, &second, &["mcp", "refresh"]);
    assert!(refreshed.success(), "{refreshed:?}");
    let got = synapse_in(
        &env,
        &project,
        &second,
        &["mcp", "call", "proj", "env", "TAG"],
    );
    assert_eq!(got.stdout.trim(), "second", "{got:?}");
    // The note is for a client whose environment differs, and only while it does.
    let quiet = synapse_in(&env, &project, &second, &["mcp", "list"]);
    assert!(!quiet.stderr.contains("note: "), "{quiet:?}");
    let told = synapse_in(&env, &project, &first, &["mcp", "list"]);
    assert!(told.stderr.contains("${PROJ_TAG}"), "{told:?}");
}

#[test]
fn a_legacy_sse_server_is_refused_naming_it_and_its_streamable_http_url() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}})
            .to_string(),
    )
    .unwrap();
    let (servers, _) = listed(&env, &env.workdir(), &[]);
    let s = server(&servers, "old");
    assert_eq!(s["state"], "failed", "{s}");
    let reason = s["reason"].as_str().unwrap();
    assert!(
        reason.contains("old: unsupported transport \"sse\"")
            && reason.contains("\"url\": \"http://127.0.0.1:9/mcp\""),
        "{reason}"
    );
    let refused = env.cli(&[
        "mcp",
        "add-json",
        "old2",
        r#"{"type": "sse", "url": "https://example.com/v1/sse"}"#,
    ]);
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused.stderr.contains("https://example.com/v1/mcp"),
        "{refused:?}"
    );
}
