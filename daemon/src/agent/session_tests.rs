//! A chat session in-process: the scripted provider and a real (unsandboxed, gate-less) shell
//! layer; no daemon, no socket.

use super::*;
use crate::agent::RunnerLimits;
use crate::agent::fakes::{FakeProviders, ScriptedProvider, bash, text};
use crate::agent::sessions::{ChatSessions, OpenRequest, OwnMcpServers, Resume};
use crate::shell::ShellSessions;
use std::time::Duration;

struct Setup {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    chats: ChatSessions,
}

fn setup(provider: Arc<ScriptedProvider>) -> Setup {
    setup_with_settings(
        provider,
        Arc::new(synapse_shared::settings::Settings::default),
    )
}

type SettingsFn = Arc<dyn Fn() -> synapse_shared::settings::Settings + Send + Sync>;

fn setup_with_settings(provider: Arc<ScriptedProvider>, settings: SettingsFn) -> Setup {
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
        Arc::new(move |_, _, _, own: &OwnMcpServers| SessionDeps {
            shell: shell.clone(),
            providers: providers.clone(),
            settings: settings.clone(),
            system_prompt: Arc::new(crate::agent::turn_prompt::FixedPrompt(
                "You are a test.".into(),
            )),
            limits: RunnerLimits::default(),
            turn_guard: None,
            stop_hook: None,
            subagent_context: None,
            gate_env: None,
            workspace: None,
            custom: None,
            hooks: None,
            open_notices: Vec::new(),
            own_mcp: own.clone(),
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
            id: None,
            own_mcp: Default::default(),
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

/// Settings naming the model `small-model` with this window and output limit.
fn small_model(window: Arc<AtomicUsize>, max_output: u32) -> SettingsFn {
    Arc::new(move || {
        serde_json::from_value(serde_json::json!({
            "model": "small-model",
            "llm": {"models": {"small-model": {
                "contextWindow": window.load(Ordering::Relaxed),
                "maxOutputTokens": max_output,
            }}}
        }))
        .unwrap()
    })
}

/// Runs a turn to its end (compaction notices on the way included).
async fn whole_turn(session: &Arc<ChatSession>, prompt: &str) -> Vec<SessionEvent> {
    let mut rx = session.subscribe();
    session.start_turn(prompt.into()).unwrap();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the turn finished in time")
            .unwrap();
        let done = matches!(event, SessionEvent::TurnFinished { .. });
        events.push(event);
        if done {
            while session.is_running() {
                assert!(tokio::time::Instant::now() < deadline);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            return events;
        }
    }
}

/// A request's size as a server would count it, roughly: its JSON bytes / 4.
fn request_tokens(request: &synapse_llm::LlmRequest) -> usize {
    (serde_json::to_string(&request.messages).unwrap().len() + request.system.len()) / 4
}

const FIVE_KB: &str = r"head -c 5000 /dev/zero | tr '\0' x";

fn compacted(events: &[SessionEvent]) -> bool {
    events.iter().any(|e| {
        matches!(e, SessionEvent::Agent(crate::agent::AgentEvent::Notice(n)) if n.starts_with("Context compacted"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_turn_is_compacted_between_tool_calls_and_stays_in_the_window() {
    let mut steps: Vec<_> = (0..8).map(|i| bash(&format!("t{i}"), FIVE_KB)).collect();
    steps.push(text("read them all"));
    let provider = ScriptedProvider::new(steps);
    let window = Arc::new(AtomicUsize::new(8192));
    let s = setup_with_settings(provider.clone(), small_model(window, 1024));
    let session = open(&s, Resume::New);
    let events = whole_turn(&session, "print eight large files").await;
    assert_eq!(final_text(&events), "read them all");
    assert!(compacted(&events), "{events:?}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 9);
    for (i, r) in requests.iter().enumerate() {
        let tokens = request_tokens(r);
        assert!(tokens < 8192 - 1024, "request {i}: {tokens} tokens");
        // No call without its result, no result without its call.
        let calls: Vec<String> = r
            .messages
            .iter()
            .flat_map(|m| m.tool_uses().map(|(id, _, _)| id.to_string()))
            .collect();
        let results: Vec<String> = r
            .messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                synapse_llm::ContentBlock::ToolResult { tool_use_id, .. } => {
                    Some(tool_use_id.clone())
                }
                _ => None,
            })
            .collect();
        assert_eq!(calls, results, "request {i}");
    }
    // The newest result reached the model whole; the turn's prompt was kept.
    let last = requests.last().unwrap();
    let synapse_llm::ContentBlock::ToolResult { content, .. } =
        &last.messages.last().unwrap().content[0]
    else {
        panic!("{:?}", last.messages.last())
    };
    assert_eq!(content.matches('x').count(), 5000);
    assert_eq!(last.messages[0].text(), "print eight large files");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_is_sized_from_its_history_before_the_first_request() {
    let mut steps: Vec<_> = (0..8).map(|i| bash(&format!("t{i}"), FIVE_KB)).collect();
    steps.push(text("done"));
    steps.push(text("resumed answer"));
    let provider = ScriptedProvider::new(steps);
    // A large window first: the turn keeps everything.
    let window = Arc::new(AtomicUsize::new(200_000));
    let s = setup_with_settings(provider.clone(), small_model(window.clone(), 1024));
    let session = open(&s, Resume::New);
    let id = session.id.clone();
    let events = whole_turn(&session, "print eight large files").await;
    assert!(!compacted(&events), "{events:?}");
    assert!(request_tokens(&provider.requests()[8]) > 8192);
    drop(session);
    s.chats.unload_idle(Duration::ZERO);
    // Then an 8k model resumes it: nothing was reported yet, the history alone says compact.
    window.store(8192, Ordering::Relaxed);
    let resumed = open(&s, Resume::Id(id));
    let events = whole_turn(&resumed, "and now?").await;
    assert_eq!(final_text(&events), "resumed answer");
    assert!(compacted(&events), "{events:?}");
    let first = &provider.requests()[9];
    let tokens = request_tokens(first);
    assert!(tokens < 8192 * 3 / 4, "{tokens} tokens");
    assert_eq!(first.messages.last().unwrap().text(), "and now?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_request_fits_the_models_output_limit_and_carries_no_tool_blocks() {
    let provider = ScriptedProvider::new([
        bash("t1", "echo from-the-shell"),
        text("a1"),
        text("a2"),
        text("a3"),
        text("a4"),
        text("SUMMARY: echoed once"),
    ]);
    let window = Arc::new(AtomicUsize::new(8192));
    let s = setup_with_settings(provider.clone(), small_model(window, 700));
    let session = open(&s, Resume::New);
    for n in 1..=4 {
        whole_turn(&session, &format!("question {n}")).await;
    }
    let events = until_done(&session, |c| c.start_compaction()).await;
    assert!(compacted(&events), "{events:?}");
    let summary = provider.requests().last().unwrap().clone();
    assert_eq!(summary.max_tokens, 700, "the model's own output limit");
    assert_eq!(summary.system, crate::agent::context::SUMMARY_SYSTEM);
    assert!(summary.tools.is_empty());
    let blocks: Vec<_> = summary
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .collect();
    assert!(
        blocks
            .iter()
            .all(|b| matches!(b, synapse_llm::ContentBlock::Text { .. })),
        "tool blocks without a tool definition: {blocks:?}"
    );
    let all = serde_json::to_string(&summary.messages).unwrap();
    assert!(
        all.contains("echo from-the-shell") && all.contains("from-the-shell"),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_turn_of_medium_results_is_summarised_up_to_its_latest_steps() {
    // 1.5 KB each: too small to offload, 30 of them far past an 8k window.
    let mut steps: Vec<_> = (0..30)
        .map(|i| bash(&format!("t{i}"), r"head -c 1500 /dev/zero | tr '\0' m"))
        .collect();
    steps.push(text("all done"));
    let provider = ScriptedProvider::answering_summaries(steps);
    let window = Arc::new(AtomicUsize::new(8192));
    let settings = small_model(window, 1024);
    let s = setup_with_settings(provider.clone(), settings);
    let session = open(&s, Resume::New);
    let events = whole_turn(&session, "print thirty files").await;
    assert_eq!(final_text(&events), "all done");
    let requests = provider.requests();
    let (summaries, turn): (Vec<_>, Vec<_>) = requests.iter().partition(|r| r.tools.is_empty());
    assert!(!summaries.is_empty(), "the turn was summarised");
    assert_eq!(turn.len(), 31);
    for (i, r) in turn.iter().enumerate() {
        let tokens = request_tokens(r);
        assert!(tokens < 8192 - 1024, "request {i}: {tokens} tokens");
        let calls: Vec<String> = r
            .messages
            .iter()
            .flat_map(|m| m.tool_uses().map(|(id, _, _)| id.to_string()))
            .collect();
        let results: Vec<String> = r
            .messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                synapse_llm::ContentBlock::ToolResult { tool_use_id, .. } => {
                    Some(tool_use_id.clone())
                }
                _ => None,
            })
            .collect();
        assert_eq!(calls, results, "request {i}");
    }
    let last = serde_json::to_string(&turn.last().unwrap().messages).unwrap();
    assert!(
        last.contains(crate::agent::fakes::SCRIPTED_SUMMARY),
        "{last}"
    );
    assert!(last.contains("t29"), "the latest step is kept: {last}");
}

fn open_with(s: &Setup, resume: Resume, own: OwnMcpServers) -> crate::agent::sessions::Opened {
    s.chats
        .open(OpenRequest {
            cwd: s.cwd.clone(),
            env: std::collections::HashMap::new(),
            model: None,
            resume,
            id: None,
            own_mcp: own,
        })
        .unwrap()
}

fn servers(name: &str) -> OwnMcpServers {
    OwnMcpServers {
        servers: vec![(name.to_string(), r#"{"command":"true"}"#.to_string())],
        strict: false,
    }
}

/// `--resume ID --mcp-config …` of a session still in memory: loaded again with the new
/// servers when nobody uses it; kept as it is, and the client told why, when a front end does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_with_other_servers_loads_an_unused_session_again() {
    let s = setup(ScriptedProvider::new([]));
    let first = open_with(&s, Resume::New, servers("a")).session;
    let id = first.id.clone();
    let again = open_with(&s, Resume::Id(id.clone()), servers("b"));
    assert!(!Arc::ptr_eq(&first, &again.session), "loaded again");
    assert!(again.session.own_mcp() == &servers("b"));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    // The same servers, or none given: reattached as it is.
    let same = open_with(&s, Resume::Id(id.clone()), servers("b")).session;
    assert!(Arc::ptr_eq(&same, &again.session));
    let none = open_with(&s, Resume::Id(id.clone()), OwnMcpServers::default()).session;
    assert!(Arc::ptr_eq(&none, &again.session));

    // A front end follows it: it keeps its servers.
    let _front = again.session.subscribe();
    let kept = open_with(&s, Resume::Id(id), servers("c"));
    assert!(Arc::ptr_eq(&kept.session, &again.session));
    assert!(kept.session.own_mcp() == &servers("b"));
    assert!(
        kept.warnings[0].contains("keeps the MCP servers it has"),
        "{:?}",
        kept.warnings
    );
}
