//! Issue 18: the latency Synapse adds to a text turn against a real model server (llama.cpp's own
//! HTTP server from PyPI `xllamacpp`, SmolLM2-135M, greedy sampling), goal ≤ 5 ms. Synapse's own
//! first request is recorded once (the scripted fake model), then the same body is posted
//! straight to the server (HTTP/1.1, read to the end of the stream) and `synapse run` asks the
//! same question through a warm daemon. The reply is one token (`maxOutputTokens: 1`, so Synapse
//! reports it as cut, which is fine here) and the prompt comes from the server's cache, so the
//! server's own time is small and equal on both sides: the difference of the medians is what
//! Synapse adds (client start, gRPC, session, request building, stream relay). Needs the
//! fixtures (`tests/fixtures/install.sh`) and release binaries; without the fixtures it says so
//! and records nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

const PROMPT: &str = "Say hi.";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(python: &PathBuf) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(python)
        .arg(fixtures().join("llama_server.py"))
        .args([port.to_string(), "4096".into()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    for line in out.lines().map_while(Result::ok) {
        if line.starts_with("listening") {
            break;
        }
    }
    Server { child, port }
}

/// Posts `body` to `/v1/chat/completions` with `curl` (the baseline the issue names: a process
/// that sends the same request) and reads the whole streamed answer; without curl on this
/// machine, the same request from this process.
fn direct(port: u16, body: &str) -> Duration {
    if which_curl() {
        let start = Instant::now();
        let out = std::process::Command::new("curl")
            .args([
                "-sN",
                "-H",
                "Content-Type: application/json",
                "-H",
                "Authorization: Bearer local",
                "--data-binary",
                body,
                &format!("http://127.0.0.1:{port}/v1/chat/completions"),
            ])
            .output()
            .unwrap();
        let elapsed = start.elapsed();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("[DONE]"),
            "the server streamed an answer"
        );
        return elapsed;
    }
    let start = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Authorization: Bearer local\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let elapsed = start.elapsed();
    assert!(
        String::from_utf8_lossy(&answer).contains("[DONE]"),
        "the server streamed an answer"
    );
    elapsed
}

fn which_curl() -> bool {
    std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn synapse_turn(env: &TestEnv, base_url: &str) -> Duration {
    let mut cmd = env.synapse();
    cmd.env("SYNAPSE_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", base_url)
        .env("OPENAI_API_KEY", "local")
        .env("SYNAPSE_MODEL", "smollm2")
        .args(["run", "--quiet", PROMPT]);
    let start = Instant::now();
    let out = cmd.output().unwrap();
    let elapsed = start.elapsed();
    // One token is a cut reply (exit 1 with the reason); anything else is a failure.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || stderr.contains("output limit"),
        "{stderr}"
    );
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let python = fixtures().join("venv/bin/python");
    if !python.exists() {
        eprintln!("llm_real: the fixtures are not installed (tests/fixtures/install.sh): skipped");
        return;
    }
    let server = start_server(&python);
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"llm": {"models": {"smollm2": {"maxOutputTokens": 1}}}}"#,
    )
    .unwrap();
    env.start_daemon();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(Script::new().text("hi")))
        .unwrap();
    synapse_turn(&env, &fake.openai_base_url());
    let body = fake.requests()[0].body.to_string();

    let url = format!("http://127.0.0.1:{}/v1", server.port);
    // Warm-up: the server caches the prompt, the daemon its context-window probe.
    for _ in 0..2 {
        synapse_turn(&env, &url);
        direct(server.port, &body);
    }
    let runs = synapse_tests::report::size(15, 3);
    let (mut through, mut straight) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        through.push(synapse_turn(&env, &url));
        straight.push(direct(server.port, &body));
    }
    let (t, d) = (median(through.clone()), median(straight.clone()));
    let added_ms = (t.as_secs_f64() - d.as_secs_f64()) * 1000.0;
    synapse_tests::report::samples("llm_real.synapse_turn", &through);
    synapse_tests::report::samples("llm_real.direct_turn", &straight);
    synapse_tests::report::value("llm_real.added", added_ms, "ms");
    println!("| metric | goal | measured |");
    println!("| --- | --- | --- |");
    println!(
        "| real server: `synapse run` text turn, median of {runs} | — | {:.1} ms |",
        t.as_secs_f64() * 1000.0
    );
    println!(
        "| real server: the same request {} | — | {:.1} ms |",
        if which_curl() {
            "posted by `curl`"
        } else {
            "posted directly (no curl here)"
        },
        d.as_secs_f64() * 1000.0
    );
    println!("| added by Synapse | ≤ 5 ms | {added_ms:.1} ms |");
}
