//! MCP benchmarks (custom loop; run with `cargo build --release --bins && cargo bench -p
//! synapse-tests --bench mcp`):
//!
//! 1. warm call through the wrapper, whole process (`mcp:fs:read_text_file FILE`, goal ≤ 10 ms
//!    median) against the same call over a fresh connection per call (spawn node, initialize,
//!    call, close) — the ratio is the headline (goal ≥ 20×);
//! 2. in-process `call_argv` overhead over the server's own round trip on a raw pipe (goal ≤ 1 ms);
//! 3. 1,000 concurrent CallTool requests across 10 gRPC sessions, with no error;
//! 4. a warm resource read (`resources/read` of server-everything, through the daemon);
//! 5. ten servers configured at daemon start: all ready how long after the start, against one
//!    server's own start-up (goal: ≤ 1 s more).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use synapse_mcp::config::McpConfig;
use synapse_mcp::connection::McpConnection;
use synapse_mcp::{McpManager, McpOptions};
use synapse_shared::proto::McpCallToolRequest;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_tests::{DEADLINE, TestEnv, wait_until};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn fs_js() -> PathBuf {
    let p = fixtures().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        p.exists(),
        "{} missing: run tests/fixtures/install.sh",
        p.display()
    );
    p
}

fn bad_mcp() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bad_mcp"))
}

struct Stats {
    median: Duration,
    p90: Duration,
    n: usize,
}

fn stats(id: &str, mut samples: Vec<Duration>) -> Stats {
    synapse_tests::report::samples(id, &samples);
    samples.sort();
    let n = samples.len();
    Stats {
        median: samples[n / 2],
        p90: samples[(n * 9) / 10],
        n,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let env = TestEnv::new();
    let file = env.workdir().join("bench.txt");
    std::fs::write(&file, "benchmark line\n".repeat(20)).unwrap();
    let config = json!({"mcpServers": {
        "fs": {"command": "node", "args": [fs_js(), env.workdir()]},
        "bad": {"command": bad_mcp(), "args": []},
    }});
    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    std::fs::write(env.home().join("mcp/mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    let wrapper = env.home().join("bin/mcp:fs:read_text_file");
    wait_until(DEADLINE, "fs wrapper", || wrapper.exists());

    // 1a. Warm call through the wrapper (bash → synapse → gRPC → daemon → node server).
    let run_wrapper = || {
        let mut cmd = Command::new(&wrapper);
        env.apply_env(&mut cmd);
        let out = cmd.arg(&file).stdin(Stdio::null()).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for _ in 0..10 {
        run_wrapper();
    }
    let n = synapse_tests::report::size;
    let warm = stats(
        "mcp.warm_wrapper_call",
        (0..n(200, 10))
            .map(|_| {
                let t = Instant::now();
                run_wrapper();
                t.elapsed()
            })
            .collect(),
    );

    // 1b. The same call over a fresh connection each time.
    let cfg_text =
        json!({"mcpServers": {"fs": {"command": "node", "args": [fs_js(), env.workdir()]}}})
            .to_string();
    let mut cfg = McpConfig::default();
    cfg.merge_text(Path::new("/bench/mcp_servers.json"), &cfg_text, &|_| None);
    let fs_cfg = cfg.servers["fs"].clone();
    let cold = stats(
        "mcp.fresh_connection_call",
        rt.block_on(async {
            let mut samples = Vec::new();
            for i in 0..n(20, 2) as u64 {
                let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
                let link = synapse_mcp::connection::Link {
                    events: tx,
                    // As the user's servers: no roots.
                    roots: None,
                    oauth: synapse_mcp::oauth::OAuthVault::new(env.home().join("mcp/oauth")),
                };
                let t = Instant::now();
                let (conn, _) = McpConnection::connect(&fs_cfg, 1_000_000 + i, link)
                    .await
                    .unwrap();
                let mut args = serde_json::Map::new();
                args.insert("path".into(), json!(file));
                conn.call("read_text_file", args, &Default::default())
                    .await
                    .unwrap();
                // A one-shot client exits here; tearing the server down is not counted.
                samples.push(t.elapsed());
                conn.close().await;
            }
            samples
        }),
    );

    // 2. In-process overhead: call_argv on a warm manager vs the raw pipe round trip to the
    //    same server binary.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("mcp")).unwrap();
    std::fs::write(
        home.path().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {"bad": {"command": bad_mcp()}}}).to_string(),
    )
    .unwrap();
    let opts = McpOptions {
        mcp_dir: home.path().join("mcp"),
        bin_dir: home.path().join("bin"),
        client_bin: PathBuf::from("/unused/synapse"),
        media_dir: home.path().to_path_buf(),
        env: Arc::new(|_| None),
        oauth: synapse_mcp::oauth::OAuthVault::new(home.path().join("mcp/oauth")),
        user_env: Default::default(),
        project_plugins: Arc::new(synapse_shared::claude_plugins::UserOnly),
    };
    let argv = vec!["hello".to_string()];
    let in_process = rt.block_on(async {
        let m = McpManager::new(opts);
        m.refresh().await;
        for _ in 0..200 {
            m.call_argv("bad", "echo", &argv, None, &Default::default())
                .await;
        }
        let mut samples = Vec::new();
        for _ in 0..n(2000, 50) {
            let t = Instant::now();
            let o = m
                .call_argv("bad", "echo", &argv, None, &Default::default())
                .await;
            samples.push(t.elapsed());
            assert_eq!(o.exit_code, 0);
        }
        m.shutdown().await;
        stats("mcp.in_process_call", samples)
    });
    let raw = {
        let mut child = Command::new(bad_mcp())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let mut round = |id: u64| {
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"text": "hello"}}});
            writeln!(stdin, "{msg}").unwrap();
            stdin.flush().unwrap();
            line.clear();
            stdout.read_line(&mut line).unwrap();
        };
        for id in 0..200 {
            round(id);
        }
        let s = stats(
            "mcp.raw_pipe_round_trip",
            (0..n(2000, 50) as u64)
                .map(|id| {
                    let t = Instant::now();
                    round(10_000 + id);
                    t.elapsed()
                })
                .collect(),
        );
        drop(stdin);
        let _ = child.wait();
        s
    };

    // 3. 1,000 concurrent calls across 10 gRPC sessions.
    let (ok, failed, elapsed) = rt.block_on(async {
        let mut channels = Vec::new();
        for _ in 0..10 {
            channels.push(
                synapse_shared::rpc::connect(env.paths().socket())
                    .await
                    .unwrap(),
            );
        }
        let t = Instant::now();
        let mut tasks = Vec::new();
        for (s, ch) in channels.iter().enumerate() {
            for i in 0..n(100, 5) {
                let mut client = McpClient::new(ch.clone());
                let (server, tool, argv) = if i % 2 == 0 {
                    ("bad", "echo", vec![format!("s{s}-{i}")])
                } else {
                    (
                        "fs",
                        "read_text_file",
                        vec![file.display().to_string(), "--head".into(), "1".into()],
                    )
                };
                tasks.push(tokio::spawn(async move {
                    let r = client
                        .call_tool(McpCallToolRequest {
                            server: server.into(),
                            tool: tool.into(),
                            argv: argv.clone(),
                            ..Default::default()
                        })
                        .await;
                    match r {
                        Ok(r) => {
                            let r = r.into_inner();
                            let expect = if server == "bad" {
                                format!("{}\n", argv[0])
                            } else {
                                "benchmark line\n".into()
                            };
                            r.exit_code == 0 && r.stdout == expect.as_bytes()
                        }
                        Err(_) => false,
                    }
                }));
            }
        }
        let mut ok = 0;
        let mut failed = 0;
        for t in tasks {
            if t.await.unwrap_or(false) {
                ok += 1
            } else {
                failed += 1
            }
        }
        (ok, failed, t.elapsed())
    });

    // 4. A warm resource read through the daemon (gRPC `Mcp.Query`, as `mcp:every:read` does).
    let every =
        fixtures().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    std::fs::write(
        env.home().join("mcp/mcp_servers.json"),
        json!({"mcpServers": {
            "fs": {"command": "node", "args": [fs_js(), env.workdir()]},
            "bad": {"command": bad_mcp(), "args": []},
            "every": {"command": "node", "args": [every, "stdio"]},
        }})
        .to_string(),
    )
    .unwrap();
    let read = rt.block_on(async {
        let ch = synapse_shared::rpc::connect(env.paths().socket())
            .await
            .unwrap();
        let mut client = McpClient::new(ch);
        // The config changed under the running daemon: `synapse tools refresh mcp` reads it.
        client
            .refresh(synapse_shared::proto::McpRefreshRequest::default())
            .await
            .unwrap();
        let query = || synapse_shared::proto::McpQueryRequest {
            server: "every".into(),
            kind: "read".into(),
            target: "demo://resource/static/document/architecture.md".into(),
            ..Default::default()
        };
        let deadline = Instant::now() + DEADLINE;
        loop {
            let ok = client
                .query(query())
                .await
                .is_ok_and(|r| r.into_inner().exit_code == 0);
            if ok {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "server-everything never answered"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut samples = Vec::new();
        for _ in 0..n(500, 20) {
            let t = Instant::now();
            let r = client.query(query()).await.unwrap().into_inner();
            samples.push(t.elapsed());
            assert_eq!(r.exit_code, 0);
        }
        stats("mcp.resource_read", samples)
    });
    env.stop_daemon();

    // 5. Ten servers at daemon start, all ready.
    let ten = TestEnv::new();
    let servers: serde_json::Map<String, serde_json::Value> = (0..10)
        .map(|i| {
            (
                format!("fs{i}"),
                json!({"command": "node", "args": [fs_js(), ten.workdir()]}),
            )
        })
        .collect();
    std::fs::create_dir_all(ten.home().join("mcp")).unwrap();
    std::fs::write(
        ten.home().join("mcp/mcp_servers.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    let started = Instant::now();
    ten.start_daemon();
    let all_ready = rt.block_on(async {
        let ch = synapse_shared::rpc::connect(ten.paths().socket())
            .await
            .unwrap();
        let mut client = McpClient::new(ch);
        let deadline = Instant::now() + DEADLINE;
        loop {
            let list = client
                .list(synapse_shared::proto::McpListRequest::default())
                .await
                .unwrap()
                .into_inner();
            let ready = list
                .servers
                .iter()
                .filter(|s| s.state == synapse_shared::proto::McpServerState::Ready as i32)
                .count();
            if ready == 10 {
                return started.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "only {ready} of 10 servers ready"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    ten.stop_daemon();
    synapse_tests::report::value("mcp.ten_servers_ready", ms(all_ready), "ms");
    synapse_tests::report::value(
        "mcp.ten_servers_over_one",
        ms(all_ready.saturating_sub(cold.median)),
        "ms",
    );

    println!(
        "MCP benchmarks ({} build)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!(
        "  warm call via wrapper (whole process): median {:.2} ms, p90 {:.2} ms (n={})   goal <= 2 ms",
        ms(warm.median),
        ms(warm.p90),
        warm.n
    );
    println!(
        "  fresh connection per call (spawn+initialize+list+call): median {:.2} ms, p90 {:.2} ms (n={})",
        ms(cold.median),
        ms(cold.p90),
        cold.n
    );
    println!(
        "  ratio fresh/warm: {:.1}x   goal >= 20x",
        cold.median.as_secs_f64() / warm.median.as_secs_f64()
    );
    println!(
        "  in-process call_argv: median {:.3} ms; raw pipe round trip to the same server: median {:.3} ms; overhead {:.3} ms   goal <= 1 ms",
        ms(in_process.median),
        ms(raw.median),
        ms(in_process.median.saturating_sub(raw.median))
    );
    println!(
        "  1000 concurrent calls over 10 sessions: {ok} ok, {failed} failed, {:.0} ms total",
        ms(elapsed)
    );
    println!(
        "  warm resource read: median {:.2} ms, p90 {:.2} ms (n={})",
        ms(read.median),
        ms(read.p90),
        read.n
    );
    println!(
        "  10 servers at daemon start: all ready {:.0} ms after the start; one server alone {:.0} ms; \
         difference {:.0} ms   goal <= 1000 ms",
        ms(all_ready),
        ms(cold.median),
        ms(all_ready.saturating_sub(cold.median))
    );
    synapse_tests::report::value("mcp.concurrent_errors", failed as f64, "errors");
    synapse_tests::report::value("mcp.concurrent_total", ms(elapsed), "ms");
    assert_eq!(failed, 0, "concurrent calls failed");
}
