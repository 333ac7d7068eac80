//! MCP protocol behaviour against real servers: a slow call times out, is cancelled on the wire
//! and leaves its server connected with its state (Python SDK fixture), and the `--help`
//! example of every `server-memory` tool (arrays of objects included) runs successfully.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use std::time::Duration;

use mcp_support::*;
use serde_json::json;
use synapse_mcp::{EXIT_OK, EXIT_TOOL_ERROR, StateKind};
use synapse_tests::TestEnv;

fn memory_server_js() -> std::path::PathBuf {
    fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_call_is_cancelled_and_server_stays_connected() {
    let home = Home::new();
    home.write_config(&json!({"mcpServers": {"py": {
        "command": venv_python(),
        "args": [py_server(), "stdio"],
        "toolTimeoutSec": 0.5,
    }}}));
    let m = home.manager(&[]);
    let s = m.refresh().await;
    assert!(s.failed.is_empty(), "{s:?}");
    let pid = m.list()[0].pid.unwrap();

    let o = m
        .call_argv("py", "wait_ms", &args(&["5000"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_TOOL_ERROR, "{}", err(&o));
    assert!(err(&o).contains("call timeout of 0.5 s"), "{}", err(&o));
    assert!(err(&o).contains("toolTimeoutSec"), "{}", err(&o));

    // Still the same healthy process, and it was told to stop: its own count of cancelled
    // calls (kept in memory, so also proof that its state survived) reaches one.
    let (state, _) = state_of(&m, "py").unwrap();
    assert_eq!(state, StateKind::Ready);
    assert_eq!(m.list()[0].pid, Some(pid));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let o = m
            .call_argv("py", "cancelled_waits", &[], None, &Default::default())
            .await;
        assert_eq!(o.exit_code, EXIT_OK, "{}", err(&o));
        if out(&o).trim() == "1" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "server never saw notifications/cancelled: {}",
            out(&o)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A quick call afterwards works on the same connection.
    let o = m
        .call_argv("py", "wait_ms", &args(&["10"]), None, &Default::default())
        .await;
    assert_eq!(out(&o).trim(), "waited");
    assert_eq!(m.list()[0].pid, Some(pid));
    m.shutdown().await;
}

#[test]
fn exec_timeout_bounds_an_in_process_mcp_call() {
    let env = TestEnv::new();
    let config = json!({"mcpServers": {"py": {
        "command": venv_python(),
        "args": [py_server(), "stdio"],
    }}});
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    // Connected first, so the timeout below measures the call alone.
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:py:cancelled_waits");
    synapse_tests::wait_until(synapse_tests::DEADLINE, "py wrappers", || wrapper.exists());
    let r = env.cli(&["exec", "mcp:py:cancelled_waits"]);
    assert_eq!(r.stdout.trim(), "0", "{}", r.stderr);
    let started = std::time::Instant::now();
    let r = env.cli(&["exec", "--timeout", "2", "mcp:py:wait_ms 20000"]);
    let took = started.elapsed();
    assert!(!r.success(), "{}", r.stdout);
    assert!(
        r.stdout.contains("timed out") || r.stderr.contains("timed out"),
        "{} {}",
        r.stdout,
        r.stderr
    );
    assert!(took < Duration::from_secs(15), "exec ran {took:?}");
    // The server stays up: the next call answers at once.
    let r = env.cli(&["exec", "mcp:py:cancelled_waits"]);
    assert!(r.success(), "{} {}", r.stdout, r.stderr);
    assert_eq!(r.stdout.trim(), "1");
    env.stop_daemon();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_memory_tool_help_example_runs() {
    let home = Home::new();
    let store = tempfile::tempdir().unwrap();
    home.write_config(&json!({"mcpServers": {"memory": {
        "command": "node",
        "args": [memory_server_js()],
        "env": {"MEMORY_FILE_PATH": store.path().join("memory.jsonl")},
    }}}));
    let m = home.manager(&[]);
    let s = m.refresh().await;
    assert!(s.failed.is_empty(), "{s:?}");
    let catalog = m.catalog();
    let help_of = |tool: &str| {
        let spec = catalog.spec("memory", tool).unwrap();
        spec.full_help()
    };
    let create = help_of("create_entities");
    assert!(create.contains("array of objects"), "{create}");
    assert!(create.contains("each item has:"), "{create}");
    assert!(create.contains("entityType (string, required)"), "{create}");
    assert!(
        create.contains("observations (array of string, required)"),
        "{create}"
    );

    // Creating first and deleting last, so every example finds what it refers to.
    let order = [
        "create_entities",
        "create_relations",
        "add_observations",
        "read_graph",
        "search_nodes",
        "open_nodes",
        "delete_observations",
        "delete_relations",
        "delete_entities",
    ];
    let tools: Vec<String> = m
        .catalog_entries()
        .iter()
        .map(|e| e.command.trim_start_matches("mcp:memory:").to_string())
        .collect();
    for tool in &tools {
        assert!(order.contains(&tool.as_str()), "untested tool {tool}");
    }
    for tool in order {
        let help = help_of(tool);
        let example = help
            .split("Example:\n  ")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        let words = split_words(example);
        assert_eq!(words[0], format!("mcp:memory:{tool}"));
        let o = m
            .call_argv("memory", tool, &words[1..], None, &Default::default())
            .await;
        assert_eq!(o.exit_code, EXIT_OK, "{example}: {}{}", out(&o), err(&o));
    }
    m.shutdown().await;
}

/// The example line split into words by bash itself, as the model's shell would.
fn split_words(line: &str) -> Vec<String> {
    let script = format!("for w in {line}; do printf '%s\\0' \"$w\"; done");
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_instructions_reach_the_model() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let config =
        json!({"mcpServers": {"py": {"command": venv_python(), "args": [py_server(), "stdio"]}}});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:py:echo");
    synapse_tests::wait_until(synapse_tests::DEADLINE, "py wrappers", || wrapper.exists());
    let fake = FakeLlm::start(Script::new().text("ok")).await.unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "hello"]);
    let r = synapse_tests::run_async(cmd).await;
    assert!(r.success(), "{r:?}");
    let system = fake.requests()[0].system_text().unwrap();
    assert!(system.contains("# MCP server instructions"), "{system}");
    assert!(
        system.contains("## mcp:py:*\nFixture instructions: call mcp:py:echo"),
        "{system}"
    );
    env.stop_daemon();
}
