//! The room in process: a late front end's catch-up (the streaming answer's text, running calls,
//! open questions), closing questions, detachment.

use super::*;
use crate::agent::approvals::SessionApprover;
use synapse_session::ClosedWhy;

fn started(id: &str) -> SessionEvent {
    SessionEvent::Agent(AgentEvent::ToolStarted {
        id: id.into(),
        command: format!("echo {id}"),
    })
}

fn finished(id: &str) -> SessionEvent {
    SessionEvent::Agent(AgentEvent::ToolFinished {
        id: id.into(),
        command: format!("echo {id}"),
        exit_code: 0,
        output: String::new(),
        changes: Vec::new(),
    })
}

/// The session's approver asking "Run `make`?" in the background, as a turn's gate does.
fn ask_make(room: &SessionRoom) -> (Arc<SessionApprover>, tokio::task::JoinHandle<String>) {
    let approver = Arc::new(SessionApprover::new("s".to_string(), room.clone()));
    let asking = {
        let approver = approver.clone();
        tokio::spawn(async move {
            approver
                .request(
                    "Run `make`?".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                )
                .await
        })
    };
    (approver, asking)
}

/// The next approval a front end sees, by id.
async fn next_approval(rx: &mut broadcast::Receiver<SessionEvent>) -> String {
    loop {
        if let SessionEvent::Approval { id, .. } = rx.recv().await.unwrap() {
            return id;
        }
    }
}

async fn next_closed(rx: &mut broadcast::Receiver<SessionEvent>) -> (String, String, ClosedWhy) {
    loop {
        if let SessionEvent::QuestionClosed { id, answer, why } = rx.recv().await.unwrap() {
            return (id, answer, why);
        }
    }
}

#[test]
fn a_late_front_end_catches_up_on_the_calls_still_running_with_their_output() {
    let room = SessionRoom::new(16);
    let _first = room.subscribe();
    room.send(started("a")).unwrap();
    room.send(finished("a")).unwrap();
    room.send(started("b")).unwrap();
    let tail = SessionEvent::Agent(AgentEvent::ToolOutput {
        id: "b".into(),
        tail: "half way".into(),
        total_bytes: 8,
    });
    room.send(tail.clone()).unwrap();
    let (_late, catch_up) = room.join();
    assert_eq!(catch_up, vec![started("b"), tail]);
    assert_eq!(room.receiver_count(), 2);
}

fn text(t: &str) -> SessionEvent {
    SessionEvent::Agent(AgentEvent::TextDelta(t.into()))
}

fn turn_finished() -> SessionEvent {
    SessionEvent::TurnFinished {
        end: crate::agent::events::TurnEnd::Completed,
        final_text: String::new(),
        turn: 1,
        usage: Default::default(),
        peak_input: 0,
    }
}

#[test]
fn a_late_front_end_sees_the_streaming_answer_from_its_start_then_live() {
    let room = SessionRoom::new(16);
    let _first = room.subscribe();
    room.send(text("Here is ")).unwrap();
    room.send(text("the plan")).unwrap();
    let (mut late, catch_up) = room.join();
    assert_eq!(catch_up, vec![text("Here is the plan")]);
    // What streams after the join comes live, once.
    room.send(text(", step one")).unwrap();
    assert_eq!(late.try_recv().unwrap(), text(", step one"));
    assert!(late.try_recv().is_err());
}

#[test]
fn the_streamed_text_comes_before_the_call_it_led_to_and_resets_for_the_next_answer() {
    let room = SessionRoom::new(16);
    let _first = room.subscribe();
    room.send(text("Let me look.")).unwrap();
    room.send(started("a")).unwrap();
    assert_eq!(room.join().1, vec![text("Let me look."), started("a")]);
    room.send(finished("a")).unwrap();
    room.send(SessionEvent::Agent(AgentEvent::ToolResults(Vec::new())))
        .unwrap();
    // The next model request: only its own text is caught up on.
    assert!(room.join().1.is_empty());
    room.send(text("Found it.")).unwrap();
    assert_eq!(room.join().1, vec![text("Found it.")]);
    room.send(turn_finished()).unwrap();
    assert!(room.join().1.is_empty());
}

#[test]
fn a_long_answer_keeps_its_end_and_says_the_start_is_not_shown() {
    let room = SessionRoom::new(16);
    let _first = room.subscribe();
    // Multi-byte text, so the cut must land on a char boundary.
    let chunk = "é".repeat(1000);
    let sent = STREAMED_TEXT_CAP_BYTES / chunk.len() + 3;
    for _ in 0..sent {
        room.send(text(&chunk)).unwrap();
    }
    room.send(text("THE END")).unwrap();
    let catch_up = room.join().1;
    let [
        SessionEvent::Notice(notice),
        SessionEvent::Agent(AgentEvent::TextDelta(kept)),
    ] = &catch_up[..]
    else {
        panic!("a notice and the text: {catch_up:?}");
    };
    assert!(notice.contains("not shown"), "{notice}");
    assert!(kept.len() <= STREAMED_TEXT_CAP_BYTES, "{}", kept.len());
    assert!(kept.len() > STREAMED_TEXT_CAP_BYTES - 4, "{}", kept.len());
    assert!(kept.ends_with("éTHE END"));
}

#[test]
fn a_turn_end_leaves_nothing_open() {
    let room = SessionRoom::new(16);
    let _front_end = room.subscribe();
    room.send(started("a")).unwrap();
    room.send(SessionEvent::TurnFinished {
        end: crate::agent::events::TurnEnd::Completed,
        final_text: String::new(),
        turn: 1,
        usage: Default::default(),
        peak_input: 0,
    })
    .unwrap();
    assert!(room.join().1.is_empty());
    assert_eq!(room.state(false), RoomState::Idle);
}

#[tokio::test]
async fn the_first_answer_wins_and_every_front_end_sees_the_question_closed() {
    let room = SessionRoom::new(16);
    let mut one = room.subscribe();
    let mut two = room.subscribe();
    let (approver, asking) = ask_make(&room);
    let id = next_approval(&mut one).await;
    assert_eq!(next_approval(&mut two).await, id);
    assert_eq!(room.state(true), RoomState::Waiting("Run `make`?".into()));
    // A front end attaching now is shown the open question.
    let (_late, catch_up) = room.join();
    assert!(
        matches!(&catch_up[..], [SessionEvent::Approval { id: shown, .. }] if *shown == id),
        "{catch_up:?}"
    );
    assert!(approver.answer(&id, "yes"));
    assert!(!approver.answer(&id, "no"), "a second answer is refused");
    assert_eq!(asking.await.unwrap(), "yes");
    let closed = (id.clone(), "yes".to_string(), ClosedWhy::Answered);
    assert_eq!(next_closed(&mut one).await, closed);
    assert_eq!(next_closed(&mut two).await, closed);
    assert_eq!(room.state(true), RoomState::Running);
    assert!(room.join().1.is_empty());
}

#[tokio::test]
async fn with_nobody_attached_an_attached_turn_is_refused_at_once() {
    let room = SessionRoom::new(16);
    let approver = SessionApprover::new("s".to_string(), room.clone());
    let decision = approver
        .request(
            "Run `make`?".into(),
            String::new(),
            String::new(),
            String::new(),
        )
        .await;
    assert_eq!(decision, "no");
}

#[tokio::test]
async fn a_detached_turn_waits_for_a_front_end_to_attach_and_answer() {
    let room = SessionRoom::new(16);
    room.set_detached(true, Duration::from_secs(30));
    let (approver, asking) = ask_make(&room);
    // Nobody attached: it stays open, and the front end attaching later is shown it.
    let id = loop {
        let (_rx, catch_up) = room.join();
        if let Some(SessionEvent::Approval { id, .. }) = catch_up.first() {
            break id.clone();
        }
        tokio::task::yield_now().await;
    };
    assert!(approver.answer(&id, "session"));
    assert_eq!(asking.await.unwrap(), "session");
}

#[tokio::test]
async fn a_detached_turns_question_times_out_and_says_so() {
    let room = SessionRoom::new(16);
    let mut watcher = room.subscribe();
    room.set_detached(true, Duration::from_millis(20));
    let approver = SessionApprover::new("s".to_string(), room.clone());
    let decision = approver
        .request(
            "Run `make`?".into(),
            String::new(),
            String::new(),
            String::new(),
        )
        .await;
    assert_eq!(decision, "no");
    let (_, answer, why) = next_closed(&mut watcher).await;
    assert_eq!((answer.as_str(), why), ("no", ClosedWhy::TimedOut));
    assert!(room.join().1.is_empty());
}

#[tokio::test]
async fn a_cancelled_question_is_withdrawn_from_every_front_end() {
    let room = SessionRoom::new(16);
    let mut one = room.subscribe();
    let (_approver, asking) = ask_make(&room);
    let id = next_approval(&mut one).await;
    asking.abort();
    let _ = asking.await;
    assert_eq!(
        next_closed(&mut one).await,
        (id, "no".to_string(), ClosedWhy::Withdrawn)
    );
}

#[test]
fn the_question_timeout_is_read_from_settings_and_a_bad_value_keeps_the_default() {
    let mut settings = synapse_shared::settings::Settings::default();
    assert_eq!(question_timeout(&settings), QUESTION_TIMEOUT_DEFAULT);
    settings
        .other
        .insert("questions".into(), serde_json::json!({"timeoutSecs": 3}));
    assert_eq!(question_timeout(&settings), Duration::from_secs(3));
    settings.other.insert(
        "questions".into(),
        serde_json::json!({"timeoutSecs": "soon"}),
    );
    assert_eq!(question_timeout(&settings), QUESTION_TIMEOUT_DEFAULT);
}
