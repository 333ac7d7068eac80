//! The session contract as a front end sees it: the `Chat` stream read only through
//! `synapse_shared::session_wire` (the one conversion), never its proto messages — tool calls
//! arrive with their kind, title and file, the todo list as a plan, an approval question names
//! the call it is about and the answers it takes, and a message can be made of content blocks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use synapse_session::{
    Answer, Decision, Event, FrontEndMessage, Input, InputBlock, PlanStatus, Question, StopReason,
    ToolKind,
};
use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ChatEvent, ClientMessage, OpenSession};
use synapse_shared::session_wire::{event_from_wire, message_to_wire};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

/// A front end on one session: sends contract messages, reads contract events.
struct FrontEnd {
    tx: futures::channel::mpsc::UnboundedSender<ClientMessage>,
    events: tonic::Streaming<ChatEvent>,
}

impl FrontEnd {
    async fn open(env: &TestEnv, fake: &FakeLlm, mode: &str) -> Self {
        let (tx, rx) = futures::channel::mpsc::unbounded::<ClientMessage>();
        tx.unbounded_send(ClientMessage {
            kind: Some(Out::Open(OpenSession {
                cwd: env.workdir().display().to_string(),
                env: [
                    ("ANTHROPIC_BASE_URL".to_string(), fake.anthropic_base_url()),
                    ("ANTHROPIC_API_KEY".to_string(), "sk-test".to_string()),
                ]
                .into(),
                permission_mode: mode.into(),
                ..Default::default()
            })),
        })
        .unwrap();
        let events = ChatClient::new(env.channel().await)
            .attach(rx)
            .await
            .unwrap()
            .into_inner();
        let mut front = Self { tx, events };
        let opened = front.next(|e| matches!(e, Event::Opened(_))).await;
        assert!(matches!(opened, Event::Opened(_)));
        front
    }

    fn send(&self, message: FrontEndMessage) {
        self.tx.unbounded_send(message_to_wire(message)).unwrap();
    }

    async fn next(&mut self, mut pick: impl FnMut(&Event) -> bool) -> Event {
        loop {
            let wire = tokio::time::timeout(Duration::from_secs(20), self.events.message())
                .await
                .expect("timed out waiting for an event")
                .unwrap()
                .expect("stream ended");
            let event = event_from_wire(wire).expect("every event reads through the contract");
            if pick(&event) {
                return event;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_plans_and_questions_arrive_in_the_contracts_words() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "remember the milk\n").unwrap();
    std::fs::create_dir_all(env.workdir().join("build")).unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .tool_call("todo add 'write the tests' 'ship it'")
            .tool_call("rm -rf build")
            .text("done")
            // The unfinished todo items bring one reminder before the turn may end.
            .text("the items stay for later"),
    )
    .await
    .unwrap();
    let mut front = FrontEnd::open(&env, &fake, "ask").await;
    front.send(FrontEndMessage::Input(Input::text("tidy up")));

    let Event::ToolCall(read) = front.next(|e| matches!(e, Event::ToolCall(_))).await else {
        unreachable!()
    };
    assert_eq!(
        (read.kind, read.title.as_str()),
        (ToolKind::Read, "Read notes.txt")
    );
    assert_eq!(
        read.locations,
        [env.workdir().join("notes.txt").display().to_string()]
    );
    let Event::Plan(plan) = front.next(|e| matches!(e, Event::Plan(_))).await else {
        unreachable!()
    };
    let items: Vec<(&str, PlanStatus)> = plan
        .iter()
        .map(|p| (p.content.as_str(), p.status))
        .collect();
    assert_eq!(
        items,
        [
            ("write the tests", PlanStatus::Pending),
            ("ship it", PlanStatus::Pending)
        ]
    );

    let Event::ToolCall(rm) = front
        .next(|e| matches!(e, Event::ToolCall(c) if c.command.starts_with("rm")))
        .await
    else {
        unreachable!()
    };
    assert_eq!(rm.kind, ToolKind::Delete);
    let Event::Question(Question::Approval(q)) = front
        .next(|e| matches!(e, Event::Question(Question::Approval(_))))
        .await
    else {
        unreachable!()
    };
    assert_eq!(q.call_id, rm.id, "the question names the call it is about");
    let offered: Vec<Decision> = q.options.iter().map(|o| o.decision).collect();
    assert_eq!(offered.first(), Some(&Decision::Yes));
    assert_eq!(offered.last(), Some(&Decision::No));
    assert!(offered.contains(&Decision::Session), "{offered:?}");
    front.send(FrontEndMessage::Answer(Answer::Approval {
        id: q.id.clone(),
        decision: Decision::No,
    }));
    let Event::TurnEnded(end) = front.next(|e| matches!(e, Event::TurnEnded(_))).await else {
        unreachable!()
    };
    assert_eq!(end.reason, StopReason::Completed);
    assert!(
        env.workdir().join("build").is_dir(),
        "the refused call did not run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_blocks_reaches_the_model_and_an_image_is_refused_with_what_to_do() {
    let env = TestEnv::new();
    env.start_daemon();
    let fake = FakeLlm::start(Script::new().text("seen")).await.unwrap();
    let mut front = FrontEnd::open(&env, &fake, "").await;
    let buffer = env.workdir().join("draft.rs");
    front.send(FrontEndMessage::Input(Input {
        blocks: vec![
            InputBlock::Text("image first".into()),
            InputBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
        ],
    }));
    let Event::Error(message) = front.next(|e| matches!(e, Event::Error(_))).await else {
        unreachable!()
    };
    assert!(
        message.contains("image/png") && message.contains("`read` it"),
        "{message}"
    );
    assert!(fake.requests().is_empty(), "nothing reached the model");

    front.send(FrontEndMessage::Input(Input {
        blocks: vec![
            InputBlock::Text("what does the unsaved buffer do?".into()),
            InputBlock::Resource {
                uri: format!("file://{}", buffer.display()),
                mime_type: "text/x-rust".into(),
                text: "fn unsaved() -> u8 { 7 }".into(),
            },
        ],
    }));
    front.next(|e| matches!(e, Event::TurnEnded(_))).await;
    let sent = fake.requests().pop().unwrap().last_user_text().unwrap();
    assert!(
        sent.starts_with("what does the unsaved buffer do?"),
        "{sent}"
    );
    assert!(
        sent.contains(&format!(
            "<attached source=\"{}\" type=\"text/x-rust\">\nfn unsaved() -> u8 {{ 7 }}\n</attached>",
            buffer.display()
        )),
        "{sent}"
    );
}
