//! The official filesystem server (`@modelcontextprotocol/server-filesystem`, run with node):
//! a wrapper and help for every tool, flag and positional calls, and tool errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use std::path::Path;
use std::process::Command;

use mcp_support::*;
use serde_json::json;
use synapse_mcp::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, McpManager};

fn fs_home(root: &Path) -> Home {
    let home = Home::new();
    home.write_config(&json!({"mcpServers": {
        "fs": {"command": "node", "args": [fs_server_js(), "${ROOT}"]}
    }}));
    let _ = root;
    home
}

async fn fs_manager(home: &Home, root: &Path) -> McpManager {
    let m = home.manager(&[("ROOT", root.to_str().unwrap())]);
    let s = m.refresh().await;
    assert!(s.failed.is_empty(), "{s:?}");
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_gets_a_wrapper_with_help() {
    let root = tempfile::tempdir().unwrap();
    let home = fs_home(root.path());
    let m = fs_manager(&home, root.path()).await;
    let entries = m.catalog_entries();
    assert!(entries.len() >= 10, "{entries:?}");
    let commands: Vec<String> = entries.iter().map(|e| e.command.clone()).collect();
    assert_eq!(home.wrappers(), commands);
    for needed in [
        "mcp:fs:read_text_file",
        "mcp:fs:write_file",
        "mcp:fs:list_directory",
        "mcp:fs:edit_file",
    ] {
        assert!(
            commands.iter().any(|c| c == needed),
            "{needed} missing from {commands:?}"
        );
    }
    let catalog = m.catalog();
    for entry in &entries {
        let target = catalog.resolve(&entry.command).unwrap();
        let spec = catalog.spec(&target.server, &target.tool).unwrap();
        let wrapper = home.bin().join(&entry.command);
        let short = Command::new(&wrapper).arg("-h").output().unwrap();
        assert!(short.status.success());
        assert_eq!(
            String::from_utf8_lossy(&short.stdout),
            spec.short_help(),
            "{}",
            entry.command
        );
        assert!(
            !entry.description.is_empty(),
            "{} has no description",
            entry.command
        );
        let full = Command::new(&wrapper).arg("--help").output().unwrap();
        let full = String::from_utf8_lossy(&full.stdout).into_owned();
        assert_eq!(full, spec.full_help());
        for p in &spec.params {
            assert!(
                full.contains(&format!("--{} (", p.kebab())),
                "{}: --{} not documented",
                entry.command,
                p.name
            );
        }
        assert!(full.contains("Example:\n  mcp:fs:"), "{full}");
        // The daemon path prints the same help.
        let o = m
            .call_argv(
                &target.server,
                &target.tool,
                &args(&["--help"]),
                None,
                &Default::default(),
            )
            .await;
        assert_eq!(out(&o), full);
    }
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_text_file_by_flag_positional_and_json() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("note.txt");
    std::fs::write(&file, "hello from a file\nline two\n").unwrap();
    let home = fs_home(root.path());
    let m = fs_manager(&home, root.path()).await;
    let path = file.to_str().unwrap();

    for argv in [
        args(&["--path", path]),
        args(&[&format!("--path={path}")]),
        args(&[path]),
        args(&["--json", &json!({"path": path}).to_string()]),
    ] {
        let o = m
            .call_argv("fs", "read_text_file", &argv, None, &Default::default())
            .await;
        assert_eq!(o.exit_code, EXIT_OK, "{argv:?}: {}", err(&o));
        assert_eq!(out(&o), "hello from a file\nline two\n", "{argv:?}");
    }
    let stdin = json!({"path": path, "head": 1}).to_string();
    let o = m
        .call_argv(
            "fs",
            "read_text_file",
            &args(&["--json", "-"]),
            Some(stdin.as_bytes()),
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "hello from a file\n");
    // Typed flag: --head is a number.
    let o = m
        .call_argv(
            "fs",
            "read_text_file",
            &args(&[path, "--head", "1"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "hello from a file\n");
    let o = m
        .call_argv(
            "fs",
            "read_text_file",
            &args(&[path, "--head", "one"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(
        err(&o).contains("--head: expected a number (got \"one\")"),
        "{}",
        err(&o)
    );
    assert!(
        err(&o).contains("Usage: mcp:fs:read_text_file <path>"),
        "{}",
        err(&o)
    );

    // Writing through an array-free tool, then listing.
    let o = m
        .call_argv(
            "fs",
            "write_file",
            &args(&[root.path().join("new.txt").to_str().unwrap(), "written"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_OK, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(root.path().join("new.txt")).unwrap(),
        "written"
    );
    let o = m
        .call_command(
            "mcp:fs:list_directory",
            &args(&[root.path().to_str().unwrap()]),
            None,
            &Default::default(),
        )
        .await
        .unwrap();
    assert!(
        out(&o).contains("[FILE] new.txt") && out(&o).contains("[FILE] note.txt"),
        "{}",
        out(&o)
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_and_usage_errors_have_their_exit_codes() {
    let root = tempfile::tempdir().unwrap();
    let home = fs_home(root.path());
    let m = fs_manager(&home, root.path()).await;
    // Outside the allowed folder: the tool answers isError.
    let o = m
        .call_argv(
            "fs",
            "read_text_file",
            &args(&["/etc/hostname"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_TOOL_ERROR, "{}", out(&o));
    assert!(o.stdout.is_empty());
    assert!(
        err(&o).to_lowercase().contains("access denied"),
        "{}",
        err(&o)
    );
    let o = m
        .call_argv("fs", "read_text_file", &[], None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(
        err(&o).starts_with("mcp:fs:read_text_file: missing required parameter <path>"),
        "{}",
        err(&o)
    );
    let o = m
        .call_argv("fs", "no_such_tool", &[], None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(
        err(&o).contains("has no tool \"no_such_tool\""),
        "{}",
        err(&o)
    );
    let o = m
        .call_argv("nope", "x", &[], None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(err(&o).contains("configured: fs"), "{}", err(&o));
    m.shutdown().await;
}
