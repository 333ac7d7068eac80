//! Issue 6: compaction through the real Chat stream — large old tool results move to files that
//! stay readable, older history is replaced by the model's summary, the latest messages stay.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ChatEvent, ClientMessage, CompactContext, OpenSession, UserInput};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

async fn next_matching(
    events: &mut tonic::Streaming<ChatEvent>,
    mut pick: impl FnMut(&Ev) -> bool,
) -> Ev {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), events.message())
            .await
            .expect("timed out waiting for an event")
            .unwrap()
            .expect("stream ended");
        let kind = event.kind.unwrap();
        if pick(&kind) {
            return kind;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_offloads_summarises_and_keeps_the_latest_messages() {
    let env = TestEnv::new();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("seq 1 2000")
            .text("t1")
            .text("t2")
            .text("t3")
            .text("t4")
            .text("SUMMARY-XYZ: the user counted to 2000")
            .text("t5"),
    )
    .await
    .unwrap();
    let (tx, rx) = futures::channel::mpsc::unbounded::<ClientMessage>();
    let send = |kind: Out| {
        tx.unbounded_send(ClientMessage { kind: Some(kind) })
            .unwrap()
    };
    send(Out::Open(OpenSession {
        cwd: env.workdir().display().to_string(),
        env: [
            ("ANTHROPIC_BASE_URL".to_string(), fake.anthropic_base_url()),
            ("ANTHROPIC_API_KEY".to_string(), "sk-test".to_string()),
        ]
        .into(),
        ..Default::default()
    }));
    let mut events = ChatClient::new(env.channel().await)
        .attach(rx)
        .await
        .unwrap()
        .into_inner();
    let Ev::Opened(opened) = next_matching(&mut events, |_| true).await else {
        panic!()
    };

    for prompt in ["first: count", "second", "third", "fourth"] {
        send(Out::Input(UserInput {
            text: prompt.into(),
            ..Default::default()
        }));
        let Ev::TurnFinished(done) =
            next_matching(&mut events, |k| matches!(k, Ev::TurnFinished(_))).await
        else {
            panic!()
        };
        assert_eq!(done.reason, "completed", "{done:?}");
    }
    send(Out::Compact(CompactContext {}));
    let Ev::Notice(notice) = next_matching(&mut events, |k| matches!(k, Ev::Notice(_))).await
    else {
        panic!()
    };
    assert!(
        notice.text.contains("1 large tool result(s)"),
        "{}",
        notice.text
    );
    assert!(
        notice.text.contains("4 earlier message(s) summarised"),
        "{}",
        notice.text
    );

    send(Out::Input(UserInput {
        text: "fifth".into(),
        ..Default::default()
    }));
    next_matching(&mut events, |k| matches!(k, Ev::TurnFinished(_))).await;
    let request = fake.requests().pop().unwrap();
    let messages = serde_json::to_string(request.messages()).unwrap();
    assert!(messages.contains("SUMMARY-XYZ"), "{messages}");
    assert!(
        !messages.contains("first: count"),
        "summarised messages must be gone"
    );
    for kept in ["second", "third", "fourth", "fifth"] {
        assert!(messages.contains(kept), "{kept} missing: {messages}");
    }

    // The offloaded output is still there for `read`.
    let dir = env
        .home()
        .join("sessions")
        .join(&opened.session_id)
        .join("tool-results");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = env.cli(&[
        "exec",
        &format!("read {} --offset 1999 --limit 1", file.display()),
    ]);
    assert!(out.stdout.contains("2000"), "{out:?}");
}

/// A request the server rejects as too long (its own error shape) is compacted and sent once
/// more: the user gets the answer, not the error, and the retry carries the summary.
#[test]
fn a_too_long_request_is_compacted_and_retried_once() {
    use synapse_tests::fake_llm::ErrorReply;
    let env = TestEnv::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt
        .block_on(FakeLlm::start(
            Script::new()
                .text("a1")
                .text("a2")
                .text("a3")
                .text("a4")
                .error(ErrorReply::new(
                    400,
                    "invalid_request_error",
                    "prompt is too long: 210000 tokens > 200000 maximum",
                ))
                .text("SUMMARY-OVERFLOW: four earlier questions were answered")
                .text("answered after compacting"),
        ))
        .unwrap();
    for prompt in ["one", "two", "three", "four"] {
        let extra: &[&str] = if prompt == "one" {
            &[]
        } else {
            &["--continue"]
        };
        let mut args = vec!["run"];
        args.extend_from_slice(extra);
        args.push(prompt);
        let out = env.cli_with_model(&fake, &args);
        assert!(out.success(), "{out:?}");
    }
    let out = env.cli_with_model(&fake, &["run", "--continue", "five"]);
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "answered after compacting", "{out:?}");
    assert!(
        out.stderr
            .contains("too long for the model's context window"),
        "the user is told why: {out:?}"
    );
    let requests = fake.requests();
    let retry = requests.last().unwrap();
    assert!(
        retry.body.to_string().contains("SUMMARY-OVERFLOW"),
        "the retry carries the summary"
    );
    assert_eq!(retry.last_user_text().as_deref(), Some("five"));
}

/// settings.json for a model called `small-model` with this window and output limit.
fn small_model(env: &TestEnv, window: u64, max_output: u32) {
    std::fs::create_dir_all(env.home()).unwrap();
    let settings = serde_json::json!({
        "model": "small-model",
        "llm": {"models": {"small-model": {"contextWindow": window, "maxOutputTokens": max_output}}}
    });
    std::fs::write(env.paths().settings_file(), settings.to_string()).unwrap();
}

/// About 5 KB of prose-like output, a line every 27 characters.
const FIVE_KB: &str = "yes 'lorem ipsum dolor sit amet' | head -c 5000";

/// A request's size as a server would count it, roughly: its body bytes / 4 (what the fake
/// reports as input tokens).
fn tokens(request: &synapse_tests::fake_llm::RecordedRequest) -> usize {
    request.body_len / 4
}

fn eight_large_results() -> Script {
    let mut script = Script::new();
    for _ in 0..8 {
        script = script.tool_call(FIVE_KB);
    }
    script
}

/// Issue 28: eight 5 KB results in one turn under an 8k window used to send requests of
/// 12.9k tokens; the check before every request compacts between the tool calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_large_results_in_one_turn_keep_every_request_under_an_8k_window() {
    let env = TestEnv::new();
    small_model(&env, 8192, 1024);
    let fake = FakeLlm::start(eight_large_results().text("all eight read"))
        .await
        .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "print eight large files"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "all eight read", "{out:?}");
    assert!(out.stderr.contains("Context compacted"), "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests.len(), 9);
    for r in &requests {
        assert!(
            tokens(r) < 8192 - 1024,
            "request {} is {} tokens, past the 8k window minus the reply",
            r.index,
            tokens(r)
        );
        // Every call still has its result next to it.
        let body = r.body.to_string();
        assert_eq!(
            body.matches("\"type\":\"tool_use\"").count(),
            body.matches("\"type\":\"tool_result\"").count(),
            "request {}",
            r.index
        );
    }
    // The newest result reached the model whole, the older ones are named by their file.
    let last = requests.last().unwrap();
    let newest = last.last_tool_result().unwrap();
    assert!(newest.matches("lorem").count() >= 5000 / 27, "{newest}");
    assert!(
        last.body.to_string().contains("[output offloaded"),
        "{}",
        last.body
    );
}

/// Issue 28: a session resumed by `run --continue` (a new daemon, nothing reported by the
/// server yet) is sized from its history, so its first request fits the window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_is_compacted_before_its_first_request() {
    let env = TestEnv::new();
    // Written with a large window: nothing compacted, the history holds 40 KB of output.
    small_model(&env, 200_000, 1024);
    let fake = FakeLlm::start(
        eight_large_results()
            .text("all eight read")
            .text("continued answer"),
    )
    .await
    .unwrap();
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "print eight large files"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert!(!out.stderr.contains("Context compacted"), "{out:?}");
    assert!(tokens(&fake.requests()[8]) > 8192, "the history is past 8k");
    env.stop_daemon();

    // The same session under an 8k model, in a new daemon.
    small_model(&env, 8192, 1024);
    let mut cmd = env.synapse_with_model(&fake);
    cmd.args(["run", "--continue", "and now?"]);
    let out = synapse_tests::run_async(cmd).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.trim(), "continued answer", "{out:?}");
    assert!(out.stderr.contains("Context compacted"), "{out:?}");
    let requests = fake.requests();
    let first = &requests[9];
    assert!(
        tokens(first) < 8192 * 3 / 4,
        "the first request after --continue is {} tokens",
        tokens(first)
    );
    assert_eq!(first.last_user_text().as_deref(), Some("and now?"));
    assert!(
        first.body.to_string().contains("print eight large files"),
        "the conversation goes on"
    );
}

/// Issue 28: the summary asks for no more than the model's own output limit and carries the
/// tool calls and results as text (no tool blocks without a tool definition).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_request_fits_the_output_limit_and_has_no_tool_blocks() {
    let env = TestEnv::new();
    small_model(&env, 8192, 600);
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("echo from-the-shell")
            .text("t1")
            .text("t2")
            .text("t3")
            .text("t4")
            .text("SUMMARY-600: echoed once"),
    )
    .await
    .unwrap();
    let (tx, rx) = futures::channel::mpsc::unbounded::<ClientMessage>();
    let send = |kind: Out| {
        tx.unbounded_send(ClientMessage { kind: Some(kind) })
            .unwrap()
    };
    send(Out::Open(OpenSession {
        cwd: env.workdir().display().to_string(),
        env: [
            ("ANTHROPIC_BASE_URL".to_string(), fake.anthropic_base_url()),
            ("ANTHROPIC_API_KEY".to_string(), "sk-test".to_string()),
        ]
        .into(),
        ..Default::default()
    }));
    let mut events = ChatClient::new(env.channel().await)
        .attach(rx)
        .await
        .unwrap()
        .into_inner();
    next_matching(&mut events, |k| matches!(k, Ev::Opened(_))).await;
    for prompt in ["first", "second", "third", "fourth"] {
        send(Out::Input(UserInput {
            text: prompt.into(),
            ..Default::default()
        }));
        next_matching(&mut events, |k| matches!(k, Ev::TurnFinished(_))).await;
    }
    send(Out::Compact(CompactContext {}));
    let Ev::Notice(notice) = next_matching(
        &mut events,
        |k| matches!(k, Ev::Notice(n) if n.text.contains("Context compacted")),
    )
    .await
    else {
        panic!()
    };
    assert!(notice.text.contains("summarised"), "{}", notice.text);
    let summary = fake.requests().pop().unwrap();
    assert_eq!(summary.body["max_tokens"], 600, "{}", summary.body);
    assert!(summary.tools().is_empty(), "{}", summary.body);
    let messages = serde_json::to_string(summary.messages()).unwrap();
    assert!(
        !messages.contains("tool_use") && !messages.contains("tool_result"),
        "{messages}"
    );
    assert!(messages.contains("echo from-the-shell"), "{messages}");
}
