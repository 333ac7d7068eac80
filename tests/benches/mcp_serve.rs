//! `synapse mcp serve` benchmark (custom loop; `cargo run -p synapse-bench -- --only mcp_serve`):
//! a warm `tools/call` of a re-offered MCP tool through `synapse mcp serve` over its stdio pipe,
//! against the daemon's own call of the same command (`Tools.Exec` of `mcp:bad:echo --json …`,
//! gated in the folder's settings mode exactly as the server's calls are). The difference of
//! the medians is the server's overhead (goal ≤ 3 ms).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use synapse_shared::proto::ExecRequest;
use synapse_shared::proto::tools_client::ToolsClient;
use synapse_tests::{DEADLINE, TestEnv, bin, wait_until};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let env = TestEnv::new();
    let config = json!({"mcpServers": {"bad": {"command": PathBuf::from(env!("CARGO_BIN_EXE_bad_mcp")), "args": []}}});
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(env.home().join("mcp/mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:bad:echo");
    wait_until(DEADLINE, "bad wrapper", || wrapper.exists());
    let n = synapse_tests::report::size;

    // Through `synapse mcp serve`: initialize once, then time each tools/call round trip.
    let mut cmd = Command::new(bin("synapse"));
    env.apply_env(&mut cmd);
    let mut child = cmd
        .args(["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let served = {
        let mut send = |msg: Value, answer: bool| -> Value {
            writeln!(stdin, "{msg}").unwrap();
            stdin.flush().unwrap();
            if !answer {
                return Value::Null;
            }
            line.clear();
            stdout.read_line(&mut line).unwrap();
            serde_json::from_str(&line).unwrap()
        };
        send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
            true,
        );
        send(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
        );
        let listed = send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            true,
        );
        assert!(
            listed.to_string().contains("\"bad__echo\""),
            "bad__echo not offered: {listed}"
        );
        let mut call = |id: u64| {
            let r = send(
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "bad__echo", "arguments": {"text": "hello"}}}),
                true,
            );
            assert_eq!(r["result"]["isError"], json!(false), "{r}");
        };
        for id in 0..20 {
            call(100 + id);
        }
        (0..n(300, 10) as u64)
            .map(|id| {
                let t = Instant::now();
                call(1000 + id);
                t.elapsed()
            })
            .collect::<Vec<Duration>>()
    };
    drop(stdin);
    let _ = child.wait();

    // The daemon's own call of the same command.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let own: Vec<Duration> = rt.block_on(async {
        let mut tools = ToolsClient::new(env.channel().await);
        let request = ExecRequest {
            command: r#"mcp:bad:echo --json '{"text":"hello"}'"#.into(),
            cwd: env.workdir().display().to_string(),
            env: [("HOME".to_string(), env.user_home().display().to_string())].into(),
            settings_mode: true,
            ..Default::default()
        };
        for _ in 0..20 {
            tools.exec(request.clone()).await.unwrap();
        }
        let mut samples = Vec::new();
        for _ in 0..n(300, 10) {
            let t = Instant::now();
            let r = tools.exec(request.clone()).await.unwrap().into_inner();
            samples.push(t.elapsed());
            assert_eq!(r.exit_code, 0, "{}", r.output);
        }
        samples
    });
    synapse_tests::report::samples("mcp_serve.tool_call", &served);
    synapse_tests::report::samples("mcp_serve.daemon_call", &own);
    let overhead = median(served.clone()).as_secs_f64() - median(own.clone()).as_secs_f64();
    synapse_tests::report::value("mcp_serve.overhead", overhead * 1000.0, "ms");
    println!(
        "mcp serve tools/call median {:.3} ms, daemon's own call {:.3} ms, overhead {:.3} ms",
        median(served).as_secs_f64() * 1000.0,
        median(own).as_secs_f64() * 1000.0,
        overhead * 1000.0
    );
    env.stop_daemon();
}
