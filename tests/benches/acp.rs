//! `synapse acp` benchmarks (custom loop; `cargo run -p synapse-bench -- --only acp`), raw
//! JSON-RPC lines over the real agent's stdio, with the daemon already running as for a user:
//! - `acp.spawn_to_initialize`: spawning `synapse acp` until its `initialize` answer is read from
//!   its stdout (goal ≤ 15 ms);
//! - `acp.first_update`: in one session, prompt after prompt against the scripted fake model
//!   that streams text: from the fake model handing its first text chunk to the connection
//!   ([`FakeLlm::first_text_sent`]) to the first `session/update` with an
//!   `agent_message_chunk` read from `synapse acp`'s stdout (goal ≤ 5 ms).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Reply, Step};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A running `synapse acp` and its pipes.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Agent {
    fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .arg("acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message on stdout, and when its line was read.
    fn next(&mut self) -> (Value, Instant) {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        let at = Instant::now();
        assert!(n > 0, "synapse acp closed its stdout");
        (serde_json::from_str(&line).unwrap(), at)
    }

    /// Reads until the answer to request `id`; every message before it is handed to `seen`.
    fn answer(&mut self, id: u64, mut seen: impl FnMut(&Value, Instant)) -> Value {
        loop {
            let (msg, at) = self.next();
            if msg["id"] == json!(id) && msg.get("method").is_none() {
                assert!(msg["error"].is_null(), "request {id} failed: {msg}");
                return msg["result"].clone();
            }
            seen(&msg, at);
        }
    }

    /// Closes stdin (the editor went away) and waits for the agent to exit.
    fn close(self) {
        let Agent {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}},
        "clientInfo": {"name": "bench", "version": "1"}}})
}

/// The first chunk of the answer to model request `n`: the fake model names the request in it.
fn answer_text(n: usize) -> String {
    format!("answer-{n} streams a few words of text back")
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let env = TestEnv::new();
    env.start_daemon();
    let fake = rt
        .block_on(FakeLlm::start_with(|req| {
            Step::Reply(Reply::new().text(answer_text(req.index)))
        }))
        .unwrap();
    let n = synapse_tests::report::size;

    // Spawn → `initialize` answered, a new process each time.
    let spawn = |_: usize| {
        let started = Instant::now();
        let mut agent = Agent::spawn(env.synapse_with_model(&fake));
        agent.send(&initialize(0));
        let init = agent.answer(0, |_, _| {});
        let took = started.elapsed();
        assert_eq!(init["protocolVersion"], json!(1), "{init}");
        agent.close();
        took
    };
    (0..3).for_each(|i| {
        spawn(i);
    });
    let to_initialize: Vec<Duration> = (0..n(40, 3)).map(spawn).collect();

    // One session, many prompts: first text chunk sent by the model → first
    // `agent_message_chunk` read by the editor.
    let mut agent = Agent::spawn(env.synapse_with_model(&fake));
    agent.send(&initialize(0));
    agent.answer(0, |_, _| {});
    agent.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {
        "cwd": env.workdir(), "mcpServers": []}}),
    );
    let session = agent.answer(1, |_, _| {})["sessionId"].clone();
    let mut prompt = |id: u64| -> Duration {
        agent.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {
            "sessionId": session,
            "prompt": [{"type": "text", "text": format!("say something ({id})")}]}}),
        );
        let mut first: Option<(String, Instant)> = None;
        let done = agent.answer(id, |msg, at| {
            let update = &msg["params"]["update"];
            if first.is_none()
                && msg["method"] == "session/update"
                && update["sessionUpdate"] == "agent_message_chunk"
            {
                let text = update["content"]["text"].as_str().unwrap_or_default();
                first = Some((text.to_string(), at));
            }
        });
        assert_eq!(done["stopReason"], "end_turn", "{done}");
        let (text, shown) = first.expect("the answer streamed no agent_message_chunk");
        // "answer-<request index> …": the request whose first chunk this is.
        let request: usize = text
            .strip_prefix("answer-")
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("not the fake model's first chunk: {text:?}"));
        let sent = fake
            .first_text_sent(request)
            .expect("the fake model noted its first chunk");
        shown.duration_since(sent)
    };
    for id in 0..5 {
        prompt(10 + id);
    }
    let first_update: Vec<Duration> = (0..n(200, 5) as u64).map(|id| prompt(100 + id)).collect();
    agent.close();

    synapse_tests::report::samples("acp.spawn_to_initialize", &to_initialize);
    synapse_tests::report::samples("acp.first_update", &first_update);
    println!(
        "synapse acp: spawn → initialize median {:.3} ms, first token → agent_message_chunk \
         median {:.3} ms",
        median(to_initialize).as_secs_f64() * 1000.0,
        median(first_update).as_secs_f64() * 1000.0
    );
    env.stop_daemon();
    drop(fake);
}
