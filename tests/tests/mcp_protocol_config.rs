//! Servers configured for other clients, read from a temp HOME and project: `~/.claude.json`
//! (user-level and the current project's entry) and `.vscode/mcp.json`, each listed with its
//! source; Synapse's own file wins by name; a broken file is reported with its path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use mcp_support::*;
use serde_json::json;
use synapse_mcp::{EXIT_OK, StateKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_and_vscode_configs_are_read_with_their_source() {
    let home = Home::new();
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_path = project.path().to_str().unwrap().to_string();
    // The project's own files (.vscode/mcp.json) count only in a trusted folder.
    std::fs::write(
        home.path().join("trusted_folders.json"),
        json!({"folders": [project_path]}).to_string(),
    )
    .unwrap();
    let claude_json = user_home.path().join(".claude.json");
    let mut projects = serde_json::Map::new();
    projects.insert(
        project_path,
        json!({"mcpServers": {"from-claude-project": stdio(&bad_mcp(), &[])}}),
    );
    projects.insert(
        "/some/other/project".into(),
        json!({"mcpServers": {"not-this-project": stdio(&bad_mcp(), &[])}}),
    );
    std::fs::write(
        &claude_json,
        serde_json::to_string_pretty(&json!({
            "numStartups": 3,
            "mcpServers": {
                "from-claude-user": stdio(&bad_mcp(), &[]),
                "shadowed": stdio(&bad_mcp(), &["--tag", "claude"]),
            },
            "projects": projects,
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join(".vscode")).unwrap();
    let vscode = project.path().join(".vscode/mcp.json");
    std::fs::write(
        &vscode,
        json!({"servers": {"from-vscode": {
            "type": "stdio",
            "command": bad_mcp(),
            "args": ["--tag", "${workspaceFolder}"],
        }}})
        .to_string(),
    )
    .unwrap();
    let synapse_own = home.path().join("mcp/mcp_servers.json");
    home.write_config(&json!({"mcpServers": {"shadowed": stdio(&bad_mcp(), &[])}}));

    let hub = home.hub(&[("HOME", user_home.path().to_str().unwrap())]);
    let m = hub.workspace(project.path(), None);
    // The project's servers — its `.vscode/mcp.json` and its `~/.claude.json` entry alike —
    // need the user's approval of their entries.
    let approved = synapse_mcp::approval::approve_project_servers(
        &m,
        &home.path().join("mcp"),
        project.path(),
        &[],
        true,
    )
    .await
    .unwrap();
    assert_eq!(approved.approved, ["from-claude-project", "from-vscode"]);
    let mut summary = hub.user().refresh().await;
    summary.merge(m.refresh().await);
    assert!(summary.failed.is_empty(), "{summary:?}");
    assert!(summary.problems.is_empty(), "{summary:?}");
    let (list, _) = hub.list(Some(project.path()));
    let source_of = |name: &str| {
        list.iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} not listed: {list:?}"))
            .source
            .clone()
    };
    assert_eq!(source_of("from-claude-user"), claude_json);
    assert_eq!(source_of("from-claude-project"), claude_json);
    assert_eq!(source_of("from-vscode"), vscode);
    assert_eq!(source_of("shadowed"), synapse_own);
    assert!(
        list.iter().all(|s| s.name != "not-this-project"),
        "{list:?}"
    );
    for s in &list {
        assert_eq!(s.state, StateKind::Ready, "{s:?}");
    }
    // A server from VS Code's file runs like any other.
    let o = hub
        .serving(Some(project.path()), None, "from-vscode")
        .call_argv(
            "from-vscode",
            "echo",
            &args(&["hi"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_OK, "{}", err(&o));
    assert_eq!(out(&o).trim(), "hi");
    hub.shutdown().await;

    // A broken ~/.claude.json is reported with its path; Synapse's own servers still run.
    std::fs::write(&claude_json, "{ \"mcpServers\": ").unwrap();
    std::fs::remove_file(&vscode).unwrap();
    let hub = home.hub(&[("HOME", user_home.path().to_str().unwrap())]);
    let mut summary = hub.user().refresh().await;
    summary.merge(hub.workspace(project.path(), None).refresh().await);
    assert!(
        summary
            .problems
            .iter()
            .any(|p| p.contains(".claude.json") && p.contains("invalid JSON")),
        "{summary:?}"
    );
    let names: Vec<String> = hub
        .list(Some(project.path()))
        .0
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["shadowed".to_string()]);
    hub.shutdown().await;
}
