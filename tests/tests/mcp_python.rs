//! The Python SDK server (`tests/fixtures/py_server.py`) over stdio and Streamable HTTP: typed
//! flags, raw JSON and stdin, every result shape, tool errors, `${VAR:-default}` expansion and the
//! environment passed to the server, list_changed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use synapse_mcp::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, McpManager};

fn py_entry(extra_env: Value) -> Value {
    json!({
        "command": venv_python(),
        "args": [py_server(), "${PY_MODE:-stdio}"],
        "env": extra_env,
    })
}

async fn stdio_manager(home: &Home, vars: &[(&str, &str)]) -> McpManager {
    home.write_config(&json!({"mcpServers": {"py": py_entry(json!({
        "FIXTURE_TOKEN": "${TOKEN:-default-token}",
        "FIXTURE_PLAIN": "plain",
    }))}}));
    let m = home.manager(vars);
    let s = m.refresh().await;
    assert!(s.failed.is_empty(), "{s:?}");
    m
}

fn parsed(o: &synapse_mcp::McpCallOutput) -> Value {
    serde_json::from_str(out(o).trim()).unwrap_or_else(|e| panic!("{e}: {}{}", out(o), err(o)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_flags_json_and_stdin() {
    let home = Home::new();
    let m = stdio_manager(&home, &[]).await;
    let o = m
        .call_argv(
            "py",
            "typed",
            &args(&[
                "3",
                "0.25",
                "--verbose",
                "--tags",
                "a",
                "--tags",
                "b",
                "--options",
                r#"{"k":[1]}"#,
                "--mode",
                "slow",
            ]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_OK, "{}", err(&o));
    assert_eq!(
        parsed(&o),
        json!({"count": 3, "ratio": 0.25, "verbose": true, "tags": ["a", "b"], "options": {"k": [1]},
               "mode": "slow", "types": {"count": "int", "ratio": "float", "verbose": "bool"}})
    );
    let o = m
        .call_argv(
            "py",
            "typed",
            &args(&["--count=1", "--ratio=2", "--tags", r#"["x","y"]"#]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(parsed(&o)["tags"], json!(["x", "y"]));
    assert_eq!(parsed(&o)["types"]["ratio"], json!("float"));
    let stdin = br#"{"count": 7, "ratio": 1.5, "mode": "fast"}"#;
    let o = m
        .call_argv(
            "py",
            "typed",
            &args(&["--json", "-", "--verbose=false"]),
            Some(stdin),
            &Default::default(),
        )
        .await;
    assert_eq!(
        (parsed(&o)["count"].clone(), parsed(&o)["verbose"].clone()),
        (json!(7), json!(false))
    );
    let o = m
        .call_argv(
            "py",
            "typed",
            &args(&["1", "1", "--mode", "warp"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(
        err(&o).contains("--mode: \"warp\" is not one of: fast, slow"),
        "{}",
        err(&o)
    );
    let o = m
        .call_argv("py", "typed", &args(&["-h"]), None, &Default::default())
        .await;
    assert!(
        out(&o).starts_with("Usage: mcp:py:typed <count> <ratio> [--verbose] [--tags <array>]"),
        "{}",
        out(&o)
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn result_shapes_and_tool_errors() {
    let home = Home::new();
    let m = stdio_manager(&home, &[]).await;
    let o = m
        .call_argv(
            "py",
            "structured",
            &args(&["2", "5"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "{\n  \"sum\": 7,\n  \"product\": 10\n}\n");
    let o = m
        .call_argv(
            "py",
            "fail",
            &args(&["it broke"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(
        (o.exit_code, err(&o), out(&o)),
        (EXIT_TOOL_ERROR, "it broke\n".into(), String::new())
    );
    let o = m
        .call_argv("py", "resource", &[], None, &Default::default())
        .await;
    assert_eq!(out(&o), "embedded note\n");
    let o = m
        .call_argv("py", "image", &[], None, &Default::default())
        .await;
    let text = out(&o);
    let paths: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split("saved to ").nth(1))
        .map(|r| r.split(' ').next().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{text}");
    assert!(
        paths[0].ends_with(".png") && paths[1].ends_with(".wav"),
        "{text}"
    );
    assert_eq!(&std::fs::read(paths[0]).unwrap()[..4], b"\x89PNG");
    assert_eq!(std::fs::read(paths[1]).unwrap(), b"RIFF0000WAVE");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_and_default_expansion_reach_the_server() {
    let home = Home::new();
    let m = stdio_manager(&home, &[]).await;
    let o = m
        .call_argv(
            "py",
            "env",
            &args(&["FIXTURE_TOKEN"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "default-token\n");
    let o = m
        .call_argv(
            "py",
            "env",
            &args(&["FIXTURE_PLAIN"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "plain\n");
    m.shutdown().await;
    let m = stdio_manager(&home, &[("TOKEN", "from-env")]).await;
    let o = m
        .call_argv(
            "py",
            "env",
            &args(&["FIXTURE_TOKEN"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "from-env\n");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_adds_a_command() {
    let home = Home::new();
    let m = stdio_manager(&home, &[]).await;
    let o = m
        .call_argv(
            "py",
            "grow",
            &args(&["late_tool"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "added late_tool\n", "{}", err(&o));
    wait_until(Duration::from_secs(10), "wrapper for late_tool", || {
        home.bin().join("mcp:py:late_tool").exists()
    })
    .await;
    let o = m
        .call_command(
            "mcp:py:late_tool",
            &args(&["--text", "hi"]),
            None,
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(out(&o), "late_tool:hi\n", "{}", err(&o));
    m.shutdown().await;
}

/// The HTTP fixture server; killed on drop.
struct HttpServer {
    child: Child,
    port: u16,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn http_server() -> HttpServer {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(venv_python())
        .arg(py_server())
        .args(["http", "--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = HttpServer { child, port };
    wait_until(Duration::from_secs(30), "HTTP fixture listening", || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_server() {
    let server = http_server().await;
    let home = Home::new();
    home.write_config(&json!({"mcpServers": {
        "web": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp", "headers": {"X-Test": "${HDR:-h1}"}},
        "dead": {"type": "http", "url": "http://127.0.0.1:1/mcp", "startupTimeoutSec": 2},
    }}));
    let port = server.port.to_string();
    let m = home.manager(&[("PORT", &port)]);
    let s = m.refresh().await;
    assert_eq!(
        s.failed.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        vec!["dead"],
        "{s:?}"
    );
    let status = m.list();
    assert_eq!(status[1].transport, "http");
    assert!(status[1].tool_count >= 8, "{status:?}");
    let o = m
        .call_argv(
            "web",
            "echo",
            &args(&["over http"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(
        (out(&o), o.exit_code),
        ("over http\n".into(), EXIT_OK),
        "{}",
        err(&o)
    );
    let o = m
        .call_argv("web", "fail", &args(&["bad"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_TOOL_ERROR);
    assert!(home.bin().join("mcp:web:typed").exists());
    m.shutdown().await;
}
