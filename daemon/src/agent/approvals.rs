//! Approval requests of one chat session: a command asks (e.g. loading a skill marked `ask`),
//! the request goes to the attached clients as an event, and the first answer decides. "session"
//! allows the same request for the rest of the session. With no client attached, nobody can
//! answer, so the request is refused at once; when the last client goes away, every open request
//! is answered "no" ([`SessionApprover::deny_all_pending`]). Every decision is logged. A question
//! names the tool call running when it was asked (calls of a session run one at a time) and the
//! answers it takes, so a front end can show it beside the call and offer exactly those.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::{broadcast, oneshot};

use super::session::SessionEvent;
use synapse_command::Approver;
use synapse_session::{AnswerOption, Decision};

/// The id of the session's tool call running now ("" between calls).
pub type RunningCall = Arc<Mutex<String>>;

pub struct SessionApprover {
    session_id: String,
    events: broadcast::Sender<SessionEvent>,
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
    pub fn new(session_id: String, events: broadcast::Sender<SessionEvent>) -> Self {
        Self {
            session_id,
            events,
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

    /// A client's answer: "yes", "no", "session" (or "always", treated as "session" here).
    pub fn answer(&self, request_id: &str, decision: &str) -> bool {
        let sender = self.pending.lock().remove(request_id);
        match sender {
            Some(tx) => tx.send(decision.to_string()).is_ok(),
            None => false,
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
        }
        count
    }

    /// Asks the attached client and returns its decision: "yes", "no", "session" or "always"
    /// ("no" when nobody is attached). `pattern` is the rule an "always" would save to
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
        if self.events.receiver_count() == 0 {
            tracing::info!(session = %self.session_id, %title, "denied: no client to ask");
            return "no".into();
        }
        let id = format!("approval-{:08x}", fastrand::u32(..));
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.pending.lock();
            p.insert(id.clone(), tx);
        }
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
        let decision = rx.await.unwrap_or_else(|_| "no".to_string());
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
