//! Approval requests of one chat session: a command asks (e.g. loading a skill marked `ask`),
//! the request goes to the attached front ends as an event, and the first answer decides; every
//! front end then sees it closed (`QuestionClosed`), so their prompts go away. "session" allows
//! the same request for the rest of the session. With no front end attached, nobody can answer,
//! so the request is refused at once — unless the turn is detached (`synapse run --detach`):
//! then it waits for a front end to attach, up to the question timeout, and is answered "no"
//! when that passes. When the last front end leaves an attached turn, every open request is
//! answered "no" ([`SessionApprover::deny_all_pending`]). Every decision is logged. A question
//! names the tool call running when it was asked (calls of a session run one at a time) and the
//! answers it takes, so a front end can show it beside the call and offer exactly those.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use super::room::SessionRoom;
use super::session::SessionEvent;
use synapse_command::Approver;
use synapse_session::{AnswerOption, ClosedWhy, Decision};

/// The id of the session's tool call running now ("" between calls).
pub type RunningCall = Arc<Mutex<String>>;

pub struct SessionApprover {
    session_id: String,
    events: SessionRoom,
    pending: Mutex<HashMap<String, oneshot::Sender<String>>>,
    /// Titles allowed for the rest of the session.
    always: Mutex<HashSet<String>>,
    /// Told of every question put to the user (the session's `Notification` hooks).
    on_ask: Option<OnAsk>,
    running_call: RunningCall,
}

/// Told the title of each question put to the user.
pub type OnAsk = Arc<dyn Fn(&str) + Send + Sync>;

impl SessionApprover {
    pub fn new(session_id: String, events: impl Into<SessionRoom>) -> Self {
        Self {
            session_id,
            events: events.into(),
            pending: Mutex::default(),
            always: Mutex::default(),
            on_ask: None,
            running_call: RunningCall::default(),
        }
    }

    /// The session's running call, which the turn sets as each call starts.
    pub fn running_call(&self) -> RunningCall {
        self.running_call.clone()
    }

    /// Calls `on_ask` with the title of every question put to the user.
    pub fn with_on_ask(mut self, on_ask: OnAsk) -> Self {
        self.on_ask = Some(on_ask);
        self
    }

    /// A front end's answer: "yes", "no", "session" (or "always", treated as "session" here).
    /// The first answer wins: false when the request is not open (any more).
    pub fn answer(&self, request_id: &str, decision: &str) -> bool {
        let sender = self.pending.lock().remove(request_id);
        let taken = sender.is_some_and(|tx| tx.send(decision.to_string()).is_ok());
        if taken {
            self.closed(request_id, decision, ClosedWhy::Answered);
        }
        taken
    }

    /// Tells every front end the request is no longer open.
    fn closed(&self, request_id: &str, answer: &str, why: ClosedWhy) {
        let _ = self.events.send(SessionEvent::QuestionClosed {
            id: request_id.to_string(),
            answer: answer.to_string(),
            why,
        });
    }
}

/// Withdraws a request whose asker stopped waiting (its turn was cancelled) or gave up (the
/// question timed out), so no front end keeps showing it.
struct Withdraw<'a> {
    approver: &'a SessionApprover,
    id: String,
    why: ClosedWhy,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.approver.pending.lock().remove(&self.id).is_some() {
            self.approver.closed(&self.id, "no", self.why);
        }
    }
}

impl SessionApprover {
    /// Answers every open request "no" (its client went away); returns how many there were.
    pub fn deny_all_pending(&self) -> usize {
        let pending: Vec<_> = self.pending.lock().drain().collect();
        let count = pending.len();
        for (id, tx) in pending {
            tracing::info!(session = %self.session_id, request = %id, "approval denied: its client went away");
            let _ = tx.send("no".to_string());
            self.closed(&id, "no", ClosedWhy::Withdrawn);
        }
        count
    }

    /// Asks the attached front ends and returns the first decision: "yes", "no", "session" or
    /// "always" ("no" when nobody is attached and the turn is not detached, or when a detached
    /// turn's question times out). `pattern` is the rule an "always" would save to
    /// `rules_file` (both empty when "always" only lasts for the session). A title already
    /// allowed for the session is "session" at once.
    pub async fn request(
        &self,
        title: String,
        detail: String,
        pattern: String,
        rules_file: String,
    ) -> String {
        if self.always.lock().contains(&title) {
            tracing::info!(session = %self.session_id, %title, "approved (allowed for this session)");
            return "session".into();
        }
        let Some(limit) = self.events.can_ask() else {
            tracing::info!(session = %self.session_id, %title, "denied: no client to ask");
            return "no".into();
        };
        let id = format!("approval-{:08x}", fastrand::u32(..));
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.pending.lock();
            p.insert(id.clone(), tx);
        }
        let mut open = Withdraw {
            approver: self,
            id: id.clone(),
            why: ClosedWhy::Withdrawn,
        };
        if let Some(on_ask) = &self.on_ask {
            on_ask(&title);
        }
        let _ = self.events.send(SessionEvent::Approval {
            id: id.clone(),
            call_id: self.running_call.lock().clone(),
            title: title.clone(),
            detail,
            options: answer_options(&pattern, &rules_file),
            pattern: pattern.clone(),
            rules_file,
        });
        let decision = match limit {
            None => rx.await.unwrap_or_else(|_| "no".to_string()),
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(answer) => answer.unwrap_or_else(|_| "no".to_string()),
                Err(_) => {
                    tracing::info!(session = %self.session_id, %title, "denied: nobody answered in time");
                    open.why = ClosedWhy::TimedOut;
                    let _ = self.events.send(SessionEvent::Notice(format!(
                        "Nobody answered \"{title}\" within {}s (questions.timeoutSecs in \
                         settings.json), so it was answered no.",
                        limit.as_secs()
                    )));
                    "no".to_string()
                }
            },
        };
        drop(open);
        // Without a rule to save, "always" lasts for the session.
        let remember = decision == "session" || (decision == "always" && pattern.is_empty());
        if remember {
            self.always.lock().insert(title.clone());
        }
        tracing::info!(session = %self.session_id, %title, %decision, "approval answered");
        match decision.as_str() {
            "always" if pattern.is_empty() => "session".into(),
            "yes" | "session" | "always" => decision,
            _ => "no".into(),
        }
    }
}

/// The answers a question takes: "always" only when there is a rule to save (without one it
/// would mean what "session" means).
pub fn answer_options(pattern: &str, rules_file: &str) -> Vec<AnswerOption> {
    let option = |decision, label: String| AnswerOption { decision, label };
    let mut options = vec![
        option(Decision::Yes, "Yes".into()),
        option(
            Decision::Session,
            "Yes, and don't ask again in this session".into(),
        ),
    ];
    if !pattern.is_empty() {
        options.push(option(
            Decision::Always,
            format!("Always allow `{pattern}` (saved to {rules_file})"),
        ));
    }
    options.push(option(Decision::No, "No".into()));
    options
}

impl Approver for SessionApprover {
    fn ask<'a>(&'a self, title: String, detail: String) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let decision = self
                .request(title, detail, String::new(), String::new())
                .await;
            decision != "no"
        })
    }
}
