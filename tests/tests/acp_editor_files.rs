//! The editor's files on the `Chat` stream itself, read through the session contract: two front
//! ends on one session, only one of which opened with `editor_files`. Only that one is asked for
//! the file (the other sees the call and its result, never the request); its answer is what the
//! model reads; and when it leaves with a request unanswered, the read falls back to the disk
//! and says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use synapse_session::{Event, FileOp, FileReply, FrontEndMessage, Input};
use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ChatEvent, ClientMessage, OpenSession};
use synapse_shared::session_wire::{event_from_wire, message_to_wire};
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Script};

struct FrontEnd {
    tx: futures::channel::mpsc::UnboundedSender<ClientMessage>,
    events: tonic::Streaming<ChatEvent>,
    seen: Vec<Event>,
}

impl FrontEnd {
    async fn open(env: &TestEnv, fake: &FakeLlm, resume: &str, editor_files: bool) -> Self {
        let (tx, rx) = futures::channel::mpsc::unbounded::<ClientMessage>();
        tx.unbounded_send(ClientMessage {
            kind: Some(Out::Open(OpenSession {
                cwd: env.workdir().display().to_string(),
                env: [
                    ("ANTHROPIC_BASE_URL".to_string(), fake.anthropic_base_url()),
                    ("ANTHROPIC_API_KEY".to_string(), "sk-test".to_string()),
                ]
                .into(),
                resume_id: resume.into(),
                editor_files,
                ..Default::default()
            })),
        })
        .unwrap();
        let events = ChatClient::new(env.channel().await)
            .attach(rx)
            .await
            .unwrap()
            .into_inner();
        let mut front = Self {
            tx,
            events,
            seen: Vec::new(),
        };
        front.next(|e| matches!(e, Event::Opened(_))).await;
        front
    }

    fn id(&self) -> String {
        self.seen
            .iter()
            .find_map(|e| match e {
                Event::Opened(o) => Some(o.session_id.clone()),
                _ => None,
            })
            .unwrap()
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
            self.seen.push(event.clone());
            if pick(&event) {
                return event;
            }
        }
    }
}

fn file_requests(seen: &[Event]) -> usize {
    seen.iter()
        .filter(|e| matches!(e, Event::FileRequest(_)))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_editor_is_asked_and_a_leaving_editor_leaves_the_read_to_the_disk() {
    let env = TestEnv::new();
    std::fs::write(env.workdir().join("notes.txt"), "on disk\n").unwrap();
    env.start_daemon();
    let fake = FakeLlm::start(
        Script::new()
            .tool_call("read notes.txt")
            .text("first done")
            .tool_call("read notes.txt")
            .text("second done"),
    )
    .await
    .unwrap();
    let mut editor = FrontEnd::open(&env, &fake, "", true).await;
    let id = editor.id();
    let mut terminal = FrontEnd::open(&env, &fake, &id, false).await;

    terminal.send(FrontEndMessage::Input(Input::text("read it")));
    let Event::FileRequest(request) = editor.next(|e| matches!(e, Event::FileRequest(_))).await
    else {
        unreachable!()
    };
    assert_eq!(request.op, FileOp::Read);
    let notes = env.workdir().join("notes.txt").display().to_string();
    assert_eq!(request.path, notes);
    editor.send(FrontEndMessage::FileReply(FileReply {
        id: request.id,
        result: Ok("the buffer\n".into()),
    }));
    let Event::ToolDone(done) = terminal.next(|e| matches!(e, Event::ToolDone(_))).await else {
        unreachable!()
    };
    assert!(done.output.contains("the buffer"), "{}", done.output);
    terminal.next(|e| matches!(e, Event::TurnEnded(_))).await;
    assert_eq!(
        file_requests(&terminal.seen),
        0,
        "the terminal is never asked"
    );

    // The editor leaves while its second request waits: the read goes to the disk.
    terminal.send(FrontEndMessage::Input(Input::text("again")));
    editor.next(|e| matches!(e, Event::FileRequest(_))).await;
    drop(editor);
    let Event::ToolDone(done) = terminal.next(|e| matches!(e, Event::ToolDone(_))).await else {
        unreachable!()
    };
    assert!(done.output.contains("on disk"), "{}", done.output);
    assert!(
        done.output.contains(
            "the editor did not answer (the editor left the session); read the file on disk instead"
        ),
        "{}",
        done.output
    );
    terminal.next(|e| matches!(e, Event::TurnEnded(_))).await;
    assert_eq!(file_requests(&terminal.seen), 0);
}
