//! A chat session in-process: the scripted provider and a real (unsandboxed, gate-less) shell
//! layer; no daemon, no socket.

use super::*;
use crate::agent::RunnerLimits;
use crate::agent::fakes::{FakeProviders, ScriptedProvider, bash, text};
use crate::agent::sessions::{ChatSessions, OpenRequest, Resume};
use crate::shell::ShellSessions;
use std::time::Duration;

struct Setup {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    chats: ChatSessions,
}

fn setup(provider: Arc<ScriptedProvider>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
    let shell = Arc::new(ShellSessions::new(
        Arc::new(crate::shell::builtin_registry()),
        None,
    ));
    let providers: Arc<dyn ProviderFactory> = Arc::new(FakeProviders(provider));
    let chats = ChatSessions::new(
        dir.path().join("sessions"),
        Arc::new(move |_, _, _| SessionDeps {
            shell: shell.clone(),
            providers: providers.clone(),
            settings: Arc::new(synapse_shared::settings::Settings::default),
            system_prompt: "You are a test.".into(),
            limits: RunnerLimits::default(),
            turn_guard: None,
            stop_hook: None,
            subagent_context: None,
            gate_env: None,
            workspace: None,
        }),
    );
    Setup {
        _dir: dir,
        cwd,
        chats,
    }
}

fn open(s: &Setup, resume: Resume) -> Arc<ChatSession> {
    s.chats
        .open(OpenRequest {
            cwd: s.cwd.clone(),
            env: [("ANTHROPIC_API_KEY".to_string(), "test-key".to_string())].into(),
            model: None,
            resume,
        })
        .unwrap()
        .session
}

/// Runs `work` and returns the events up to the turn's end (or the compaction notice).
async fn until_done(
    session: &Arc<ChatSession>,
    work: impl FnOnce(&Arc<ChatSession>) -> Result<(), TurnError>,
) -> Vec<SessionEvent> {
    let mut rx = session.subscribe();
    work(session).unwrap();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the session finished in time")
            .unwrap();
        let last = matches!(
            event,
            SessionEvent::TurnFinished { .. }
                | SessionEvent::Error(_)
                | SessionEvent::Agent(crate::agent::AgentEvent::Notice(_))
        );
        events.push(event);
        if last {
            while session.is_running() {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the session never stopped"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            return events;
        }
    }
}

fn final_text(events: &[SessionEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            SessionEvent::TurnFinished { final_text, .. } => Some(final_text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_continues_with_its_history() {
    let provider = ScriptedProvider::new([
        bash("t1", "echo from-the-shell"),
        text("first answer"),
        text("second answer"),
    ]);
    let s = setup(provider.clone());
    let session = open(&s, Resume::New);
    let id = session.id.clone();
    let events = until_done(&session, |c| c.start_turn("first question".into())).await;
    assert_eq!(final_text(&events), "first answer");
    // The session leaves memory; its file stays.
    drop(session);
    s.chats.unload_idle(Duration::ZERO);
    assert!(!s.chats.is_live(&id));

    let resumed = open(&s, Resume::Id(id.clone()));
    let events = until_done(&resumed, |c| c.start_turn("second question".into())).await;
    assert_eq!(final_text(&events), "second answer");
    let requests = provider.requests();
    let last = requests.last().unwrap();
    let all = serde_json::to_string(&last.messages).unwrap();
    assert!(all.contains("first question"), "{all}");
    assert!(
        all.contains("from-the-shell"),
        "the tool result came back: {all}"
    );
    assert!(
        all.contains("first answer") && all.contains("second question"),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_replaces_older_messages_with_the_models_summary() {
    let provider = ScriptedProvider::new([
        text("one"),
        text("two"),
        text("three"),
        text("four"),
        text("SUMMARY: the user said hello four times"),
        text("five"),
    ]);
    let s = setup(provider.clone());
    let session = open(&s, Resume::New);
    for n in 1..=4 {
        until_done(&session, |c| c.start_turn(format!("hello {n}"))).await;
    }
    let events = until_done(&session, |c| c.start_compaction()).await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            SessionEvent::Agent(crate::agent::AgentEvent::Notice(n)) if n.contains("summarised")
        )),
        "{events:?}"
    );
    let summary_request = &provider.requests()[4];
    assert!(
        summary_request.tools.is_empty(),
        "no tools offered for a summary"
    );
    until_done(&session, |c| c.start_turn("and now?".into())).await;
    let last = provider.requests().last().unwrap().clone();
    let first = last.messages.first().unwrap().text();
    assert!(
        first.contains("SUMMARY: the user said hello four times"),
        "the history starts from the summary: {first}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_turn_while_one_runs_is_refused_as_busy() {
    let provider = ScriptedProvider::new([crate::agent::fakes::Step::Hang]);
    let s = setup(provider);
    let session = open(&s, Resume::New);
    session.start_turn("go".into()).unwrap();
    assert!(matches!(
        session.start_turn("again".into()),
        Err(TurnError::Busy)
    ));
    assert!(session.cancel());
}
