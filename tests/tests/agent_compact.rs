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
