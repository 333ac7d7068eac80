//! Issue 9 load: 50 concurrent chat sessions (`synapse run`, each a tool call then an answer,
//! against the fake LLM), 200 concurrent `synapse exec`, and 1,000 concurrent `mcp:*` calls
//! through the wrapper executables, all at once against one daemon. Goals: zero errors, no
//! deadlock (everything ends within the deadline), bounded memory (the daemon's peak RSS is
//! reported), fair progress (p50/p99 latency per kind of operation).
//! Needs release binaries and the test fixtures: `tests/fixtures/install.sh && cargo build
//! --release --bins && cargo bench -p synapse-tests --bench load`. Prints one table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use synapse_tests::fake_llm::{FakeLlm, Reply, Step};
use synapse_tests::{DEADLINE, TestEnv, wait_until};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn peak_rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

/// Runs `jobs` commands at once, each on its own thread; (latencies, failures).
fn run_all(jobs: Vec<Command>) -> (Vec<Duration>, Vec<String>) {
    let results: Arc<Mutex<(Vec<Duration>, Vec<String>)>> = Arc::default();
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|mut cmd| {
            let results = results.clone();
            std::thread::spawn(move || {
                let start = Instant::now();
                let out = cmd.output();
                let took = start.elapsed();
                let mut r = results.lock().unwrap();
                match out {
                    Ok(o) if o.status.success() => r.0.push(took),
                    Ok(o) => r.1.push(String::from_utf8_lossy(&o.stderr).into_owned()),
                    Err(e) => r.1.push(e.to_string()),
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut r = std::mem::take(&mut *results.lock().unwrap());
    r.0.sort();
    r
}

fn main() {
    use synapse_tests::report::{samples, size, value};
    let (sessions_n, execs_n, calls_n) = (size(50, 5), size(200, 20), size(1000, 50));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let env = TestEnv::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    let config = serde_json::json!({"mcpServers": {"py": {
        "command": fixtures.join("venv/bin/python"),
        "args": [fixtures.join("py_server.py"), "stdio"]
    }}});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    let daemon = env.start_daemon();
    let wrapper = env.home().join("bin/mcp:py:echo");
    wait_until(DEADLINE, "the py server's wrappers", || wrapper.exists());

    let fake = rt
        .block_on(FakeLlm::start_with(|req| {
            if req.last_tool_result().is_some() {
                Step::Reply(Reply::new().text("done"))
            } else {
                let n = req.last_user_text().unwrap_or_default();
                Step::Reply(Reply::new().tool_call(format!("echo session {n}")))
            }
        }))
        .unwrap();

    let sessions: Vec<Command> = (0..sessions_n)
        .map(|i| {
            let mut cmd = env.synapse();
            cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "bench")
                .args(["run", "--quiet", &i.to_string()]);
            cmd
        })
        .collect();
    let execs: Vec<Command> = (0..execs_n)
        .map(|i| {
            let mut cmd = env.synapse();
            cmd.args(["exec", &format!("echo exec {i}")]);
            cmd
        })
        .collect();
    let calls: Vec<Command> = (0..calls_n)
        .map(|i| {
            let mut cmd = Command::new(&wrapper);
            env.apply_env(&mut cmd);
            cmd.arg(format!("call {i}"));
            cmd
        })
        .collect();

    let start = Instant::now();
    let (s, e, m) = std::thread::scope(|scope| {
        let s = scope.spawn(|| run_all(sessions));
        let e = scope.spawn(|| run_all(execs));
        let m = scope.spawn(|| run_all(calls));
        (s.join().unwrap(), e.join().unwrap(), m.join().unwrap())
    });
    let wall = start.elapsed();

    samples("load.run", &s.0);
    samples("load.exec", &e.0);
    samples("load.mcp", &m.0);
    value(
        "load.errors",
        (s.1.len() + e.1.len() + m.1.len()) as f64,
        "errors",
    );
    value("load.daemon_rss", peak_rss_mb(daemon), "MB");
    println!(
        "\nload: {sessions_n} chat sessions + {execs_n} synapse exec + {calls_n} mcp:* calls, all at once"
    );
    println!("| operation | ok | errors | p50 | p99 | max |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, (lat, errors)) in [
        ("synapse run (tool call + answer)", &s),
        ("synapse exec", &e),
        ("mcp:py:echo wrapper", &m),
    ] {
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            lat.len(),
            errors.len(),
            ms(percentile(lat, 0.5)),
            ms(percentile(lat, 0.99)),
            ms(*lat.last().unwrap())
        );
        if let Some(first) = errors.first() {
            println!("  first error: {}", first.trim());
        }
    }
    println!(
        "wall time {} · daemon peak RSS {:.1} MB",
        ms(wall),
        peak_rss_mb(daemon)
    );
    let total_errors = s.1.len() + e.1.len() + m.1.len();
    assert_eq!(total_errors, 0, "the load produced errors");
    env.stop_daemon();
}
