//! Issue 21 (MCP errors in words), through the real daemon: a server that cannot be reached
//! over HTTP, one whose command does not exist and one that exits at once are each reported by
//! `synapse mcp list` with a reason a person can act on, never a Rust type path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_tests::{DEADLINE, TestEnv, wait_until};

#[test]
fn failed_servers_are_explained_in_words() {
    let env = TestEnv::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        serde_json::json!({"mcpServers": {
            "remote": {"type": "http", "url": url},
            "missing": {"command": "/nonexistent/bin/server"},
            "quits": {"command": "bash", "args": ["-c", "exit 3"]},
        }})
        .to_string(),
    )
    .unwrap();
    let mut listed = String::new();
    wait_until(DEADLINE, "all three servers to fail", || {
        listed = env.cli(&["mcp", "list"]).stdout;
        listed.lines().filter(|l| l.contains(" failed ")).count() == 3
    });
    assert!(!listed.contains("::"), "type names shown:\n{listed}");
    let line = |name: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{listed}"))
            .to_string()
    };
    assert!(
        line("remote").contains(&format!("cannot reach the server at {url}")),
        "{listed}"
    );
    assert!(
        line("missing").contains("No such file or directory"),
        "{listed}"
    );
    assert!(line("quits").contains("exit status: 3"), "{listed}");
}
