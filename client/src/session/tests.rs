//! The driver against a fake front end and a scripted in-memory event stream.

use std::time::Duration;

use synapse_session::{
    Answer, ApprovalQuestion, Decision, Event, FormAction, FormQuestion, FrontEndMessage, Input,
    Opened, Question, StopReason, TurnEnded, Usage,
};
use synapse_shared::proto::{self, ChatEvent, ClientMessage};
use synapse_shared::session_wire;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::*;

/// Records what the driver hands it; answers approvals with `decision`, forms by accepting.
struct Fake {
    events: Vec<Event>,
    questions: Vec<Question>,
    closed: Vec<Closed>,
    decision: Decision,
    /// When set, `answer` never returns (nobody at the keyboard).
    stuck: bool,
}

impl Fake {
    fn new(decision: Decision) -> Self {
        Self {
            events: Vec::new(),
            questions: Vec::new(),
            closed: Vec::new(),
            decision,
            stuck: false,
        }
    }
}

impl Frontend for Fake {
    async fn on_event(&mut self, event: Event) {
        self.events.push(event);
    }

    async fn answer(&mut self, question: Question) -> Answer {
        self.questions.push(question.clone());
        if self.stuck {
            std::future::pending::<()>().await;
        }
        match question {
            Question::Approval(q) => Answer::Approval {
                id: q.id,
                decision: self.decision,
            },
            Question::Form(q) => Answer::Form {
                id: q.id,
                action: FormAction::Accept,
                content_json: r#"{"name":"x"}"#.into(),
            },
        }
    }

    async fn on_closed(&mut self, closed: &Closed) {
        self.closed.push(closed.clone());
    }
}

/// A session whose daemon side is two channels: events in, client messages out.
struct Scripted {
    session: Session,
    daemon: mpsc::Sender<Result<ChatEvent, tonic::Status>>,
    sent: mpsc::Receiver<ClientMessage>,
}

fn scripted() -> Scripted {
    let (daemon, events) = mpsc::channel(16);
    let (outgoing, sent) = mpsc::channel(16);
    let channel = tonic::transport::Endpoint::from_static("http://[::1]:1").connect_lazy();
    let opened = Opened {
        session_id: "s1".into(),
        ..Opened::default()
    };
    let session = Session::from_parts(channel, opened, outgoing, ReceiverStream::new(events));
    Scripted {
        session,
        daemon,
        sent,
    }
}

impl Scripted {
    async fn emit(&self, event: Event) {
        self.daemon
            .send(Ok(session_wire::event_to_wire(event)))
            .await
            .expect("the pump reads");
    }

    async fn next_sent(&mut self) -> FrontEndMessage {
        let message = tokio::time::timeout(Duration::from_secs(5), self.sent.recv())
            .await
            .expect("a message within 5 s")
            .expect("the session is open");
        session_wire::message_from_wire(message).expect("a message the daemon reads")
    }
}

fn ended(reason: StopReason, text: &str) -> Event {
    Event::TurnEnded(TurnEnded {
        reason,
        message: String::new(),
        final_text: text.into(),
        turn: 1,
        usage: Usage::default(),
        error_kind: String::new(),
        http_status: 0,
        background_jobs: 0,
    })
}

fn approval(id: &str) -> Event {
    Event::Question(Question::Approval(ApprovalQuestion {
        id: id.into(),
        call_id: "call-1".into(),
        title: "Run `rm -rf build`?".into(),
        detail: String::new(),
        options: Vec::new(),
        pattern: "rm:*".into(),
        rules_file: String::new(),
    }))
}

#[tokio::test]
async fn a_turn_sends_its_input_and_ends_with_its_stop_reason() {
    let mut s = scripted();
    s.emit(Event::Text("hel".into())).await;
    s.emit(Event::Text("lo".into())).await;
    s.emit(ended(StopReason::Truncated, "hello")).await;
    let mut fake = Fake::new(Decision::Yes);
    let end = s
        .session
        .run_turn(&mut fake, Input::text("say hello"))
        .await
        .expect("the turn ends");
    assert_eq!(end.reason, StopReason::Truncated);
    assert_eq!(end.final_text, "hello");
    assert_eq!(
        s.next_sent().await,
        FrontEndMessage::Input(Input::text("say hello"))
    );
    assert_eq!(
        fake.events[..2],
        [Event::Text("hel".into()), Event::Text("lo".into())]
    );
    assert!(
        matches!(fake.events[2], Event::TurnEnded(_)),
        "{:?}",
        fake.events
    );
    assert!(fake.closed.is_empty());
}

#[tokio::test]
async fn an_approval_goes_to_the_front_end_and_its_answer_to_the_daemon() {
    let mut s = scripted();
    s.emit(approval("q7")).await;
    s.emit(ended(StopReason::Completed, "")).await;
    let mut fake = Fake::new(Decision::Session);
    s.session.follow(&mut fake).await.expect("the turn ends");
    assert_eq!(fake.questions.len(), 1);
    assert_eq!(fake.questions[0].id(), "q7");
    assert_eq!(
        s.next_sent().await,
        FrontEndMessage::Answer(Answer::Approval {
            id: "q7".into(),
            decision: Decision::Session,
        })
    );
    assert!(
        !fake.events.iter().any(|e| matches!(e, Event::Question(_))),
        "questions go to answer, not on_event"
    );
}

#[tokio::test]
async fn a_form_goes_to_the_front_end_and_its_content_to_the_daemon() {
    let mut s = scripted();
    s.emit(Event::Question(Question::Form(FormQuestion {
        id: "f1".into(),
        server: "github".into(),
        message: "Your name?".into(),
        schema_json: r#"{"type":"object","properties":{"name":{"type":"string"}}}"#.into(),
        url: String::new(),
    })))
    .await;
    s.emit(ended(StopReason::Completed, "")).await;
    let mut fake = Fake::new(Decision::No);
    s.session.follow(&mut fake).await.expect("the turn ends");
    assert_eq!(
        s.next_sent().await,
        FrontEndMessage::Answer(Answer::Form {
            id: "f1".into(),
            action: FormAction::Accept,
            content_json: r#"{"name":"x"}"#.into(),
        })
    );
}

#[tokio::test]
async fn an_unreadable_event_is_a_notice_and_the_turn_goes_on() {
    let mut s = scripted();
    s.daemon
        .send(Ok(ChatEvent { kind: None }))
        .await
        .expect("the pump reads");
    let mut bad_kind = session_wire::event_to_wire(Event::Text(String::new()));
    bad_kind.kind = Some(proto::chat_event::Kind::ToolStarted(proto::ToolStarted {
        call_id: "c".into(),
        command: "ls".into(),
        kind: "teleport".into(),
        ..Default::default()
    }));
    s.daemon.send(Ok(bad_kind)).await.expect("the pump reads");
    s.emit(ended(StopReason::Completed, "done")).await;
    let mut fake = Fake::new(Decision::Yes);
    let end = s.session.follow(&mut fake).await.expect("the turn ends");
    assert_eq!(end.final_text, "done");
    let notices: Vec<&str> = fake
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Notice(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 2, "{:?}", fake.events);
    assert!(notices[0].contains("without a kind"), "{}", notices[0]);
    assert!(notices[1].contains("\"teleport\""), "{}", notices[1]);
}

#[tokio::test]
async fn a_closed_stream_is_reported_once_and_ends_later_turns_at_once() {
    let mut s = scripted();
    s.emit(Event::Text("partial".into())).await;
    s.daemon
        .send(Err(tonic::Status::unavailable("transport error")))
        .await
        .expect("the pump reads");
    let mut fake = Fake::new(Decision::Yes);
    let closed = s
        .session
        .follow(&mut fake)
        .await
        .expect_err("the stream broke");
    assert_eq!(closed.reason(), "transport error");
    assert_eq!(closed.cause(), "the connection closed");
    assert!(!s.session.is_up());
    let again = s.session.follow(&mut fake).await.expect_err("still closed");
    assert_eq!(again, closed);
    assert_eq!(fake.closed, vec![closed], "told once");
    assert_eq!(fake.events, vec![Event::Text("partial".into())]);
}

#[tokio::test]
async fn a_stream_that_closes_while_a_question_waits_drops_the_question() {
    let mut s = scripted();
    s.emit(approval("q1")).await;
    s.emit(Event::Notice("meanwhile".into())).await;
    drop(s.daemon);
    let mut fake = Fake::new(Decision::Yes);
    fake.stuck = true;
    let closed = tokio::time::timeout(Duration::from_secs(5), s.session.follow(&mut fake))
        .await
        .expect("the close ends the wait")
        .expect_err("closed");
    assert_eq!(closed, Closed::Ended);
    assert_eq!(fake.closed, vec![Closed::Ended]);
    assert_eq!(fake.questions.len(), 1);
}

#[tokio::test]
async fn events_that_arrive_during_a_question_follow_its_answer_in_order() {
    let mut s = scripted();
    s.emit(approval("q1")).await;
    s.emit(Event::Notice("one".into())).await;
    s.emit(Event::Text("two".into())).await;
    s.emit(ended(StopReason::Cancelled, "")).await;
    let mut fake = Fake::new(Decision::No);
    let end = s.session.follow(&mut fake).await.expect("the turn ends");
    assert_eq!(end.reason, StopReason::Cancelled);
    assert_eq!(
        fake.events[..2],
        [Event::Notice("one".into()), Event::Text("two".into())]
    );
}

#[tokio::test]
async fn refusal_denies_approvals_and_declines_forms() {
    let Event::Question(q) = approval("q9") else {
        unreachable!()
    };
    assert_eq!(
        refusal(&q),
        Answer::Approval {
            id: "q9".into(),
            decision: Decision::No
        }
    );
}
