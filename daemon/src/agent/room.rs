//! The room a session's front ends sit in ([`SessionRoom`]): every event of the session goes out
//! through it to each attached front end (a broadcast; one receiver per front end), and it keeps
//! what a front end attaching mid-turn needs to show the session from where it is — the text
//! the current answer has streamed so far, the tool calls still running and the questions still
//! open. Sending and joining take one lock, so a late front end gets each of those exactly once:
//! in its catch-up or live, never both, never neither.
//!
//! It also holds the turn's detachment (`synapse run --detach`): a detached turn goes on with no
//! front end, and its questions wait for one to attach, up to the question timeout
//! (`questions.timeoutSecs` in settings.json), instead of being refused at once.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::events::AgentEvent;
use super::session::SessionEvent;

/// How long a detached turn's question waits for a front end when settings.json says nothing.
pub const QUESTION_TIMEOUT_DEFAULT: Duration = Duration::from_secs(600);

/// The most of the streaming answer's text a late front end is shown (its end, on a char
/// boundary); a longer answer's start is named in a notice instead.
pub const STREAMED_TEXT_CAP_BYTES: usize = 64 * 1024;

/// The session's front ends and what is open in its running turn. Cheap to clone (shared).
#[derive(Clone)]
pub struct SessionRoom {
    inner: Arc<Inner>,
}

struct Inner {
    events: broadcast::Sender<SessionEvent>,
    open: Mutex<Open>,
    detached: AtomicBool,
    question_timeout: Mutex<Duration>,
}

/// What is open now, as the events that opened it, in the order they were sent.
#[derive(Default)]
struct Open {
    /// `ToolStarted` of calls that have not finished, with their latest output tail.
    calls: Vec<(SessionEvent, Option<SessionEvent>)>,
    /// `Approval` / `Elicitation` not yet closed.
    questions: Vec<SessionEvent>,
    /// The text of the answer streaming now (from its model request until the next one or the
    /// turn's end), at most [`STREAMED_TEXT_CAP_BYTES`]; `text_cut`: its start was dropped.
    text: String,
    text_cut: bool,
}

/// An event sent while no front end was attached (it is still noted for the next one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoFrontEnd;

/// Where a session is, for `synapse sessions list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomState {
    Idle,
    Running,
    /// Its turn waits for an answer to this question (its title, or the form's server and
    /// message).
    Waiting(String),
}

impl From<broadcast::Sender<SessionEvent>> for SessionRoom {
    fn from(events: broadcast::Sender<SessionEvent>) -> Self {
        Self {
            inner: Arc::new(Inner {
                events,
                open: Mutex::default(),
                detached: AtomicBool::new(false),
                question_timeout: Mutex::new(QUESTION_TIMEOUT_DEFAULT),
            }),
        }
    }
}

impl SessionRoom {
    /// A room whose broadcast buffers `capacity` events for a slow front end.
    pub fn new(capacity: usize) -> Self {
        broadcast::channel(capacity).0.into()
    }

    /// Sends `event` to every attached front end, noting what it opens or closes; how many
    /// received it (`Err`: none is attached, which only the asking side cares about).
    pub fn send(&self, event: SessionEvent) -> Result<usize, NoFrontEnd> {
        let mut open = self.inner.open.lock();
        open.note(&event);
        self.inner.events.send(event).map_err(|_| NoFrontEnd)
    }

    /// A receiver of the events sent from now on (no catch-up; [`SessionRoom::join`] has it).
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.inner.events.subscribe()
    }

    /// A front end attaches: its receiver, and the events that show it what is open now (the
    /// streaming answer's text so far as one delta, running calls with their latest output, then
    /// open questions), which it gets before the live ones.
    pub fn join(&self) -> (broadcast::Receiver<SessionEvent>, Vec<SessionEvent>) {
        let open = self.inner.open.lock();
        let receiver = self.inner.events.subscribe();
        let mut catch_up = Vec::new();
        if open.text_cut {
            catch_up.push(SessionEvent::Notice(format!(
                "This answer's first part is not shown here (only its last {} KiB are kept for a \
                 late front end).",
                STREAMED_TEXT_CAP_BYTES / 1024
            )));
        }
        if !open.text.is_empty() {
            catch_up.push(SessionEvent::Agent(AgentEvent::TextDelta(
                open.text.clone(),
            )));
        }
        for (started, tail) in &open.calls {
            catch_up.push(started.clone());
            catch_up.extend(tail.clone());
        }
        catch_up.extend(open.questions.iter().cloned());
        (receiver, catch_up)
    }

    /// Front ends receiving the session's events now.
    pub fn receiver_count(&self) -> usize {
        self.inner.events.receiver_count()
    }

    /// The first open question, as a person would name it.
    pub fn waiting_on(&self) -> Option<String> {
        let open = self.inner.open.lock();
        open.questions.first().map(|q| match q {
            SessionEvent::Approval { title, .. } => title.clone(),
            SessionEvent::Elicitation {
                server, message, ..
            } => format!("{server}: {message}"),
            _ => String::new(),
        })
    }

    /// The state to list, given whether work is running.
    pub fn state(&self, running: bool) -> RoomState {
        match (running, self.waiting_on()) {
            (true, Some(question)) => RoomState::Waiting(question),
            (true, None) => RoomState::Running,
            (false, _) => RoomState::Idle,
        }
    }

    /// Marks the running turn detached (or not), with the question timeout it runs under.
    pub fn set_detached(&self, detached: bool, question_timeout: Duration) {
        *self.inner.question_timeout.lock() = question_timeout;
        self.inner.detached.store(detached, Ordering::SeqCst);
    }

    /// The running turn goes on without a front end (`synapse run --detach`).
    pub fn is_detached(&self) -> bool {
        self.inner.detached.load(Ordering::SeqCst)
    }

    /// Whether a question asked now can be answered: a front end is attached, or the turn is
    /// detached and its question waits for one. `Some(limit)`: it waits at most that long.
    pub fn can_ask(&self) -> Option<Option<Duration>> {
        if self.is_detached() {
            Some(Some(*self.inner.question_timeout.lock()))
        } else if self.receiver_count() > 0 {
            Some(None)
        } else {
            None
        }
    }
}

impl Open {
    fn note(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::Agent(AgentEvent::ToolStarted { .. }) => {
                self.calls.push((event.clone(), None));
            }
            SessionEvent::Agent(AgentEvent::ToolOutput { id, .. }) => {
                if let Some((_, tail)) = self.calls.iter_mut().find(|(s, _)| call_id(s) == id) {
                    *tail = Some(event.clone());
                }
            }
            SessionEvent::Agent(AgentEvent::ToolFinished { id, .. }) => {
                self.calls.retain(|(s, _)| call_id(s) != id);
            }
            SessionEvent::Approval { .. } | SessionEvent::Elicitation { .. } => {
                self.questions.push(event.clone());
            }
            SessionEvent::QuestionClosed { id, .. } => {
                self.questions.retain(|q| question_id(q) != id);
            }
            SessionEvent::Agent(AgentEvent::TextDelta(text)) => self.add_text(text),
            // The answer's tool results go back to the model: the next answer starts afresh.
            SessionEvent::Agent(AgentEvent::ToolResults(_)) => self.clear_text(),
            SessionEvent::TurnFinished { .. } => {
                self.calls.clear();
                self.questions.clear();
                self.clear_text();
            }
            _ => {}
        }
    }

    /// Appends streamed text, keeping the last [`STREAMED_TEXT_CAP_BYTES`].
    fn add_text(&mut self, text: &str) {
        self.text.push_str(text);
        if self.text.len() > STREAMED_TEXT_CAP_BYTES {
            let mut start = self.text.len() - STREAMED_TEXT_CAP_BYTES;
            while !self.text.is_char_boundary(start) {
                start += 1;
            }
            self.text.drain(..start);
            self.text_cut = true;
        }
    }

    fn clear_text(&mut self) {
        self.text.clear();
        self.text_cut = false;
    }
}

fn call_id(event: &SessionEvent) -> &str {
    match event {
        SessionEvent::Agent(AgentEvent::ToolStarted { id, .. }) => id,
        _ => "",
    }
}

fn question_id(event: &SessionEvent) -> &str {
    match event {
        SessionEvent::Approval { id, .. } | SessionEvent::Elicitation { id, .. } => id,
        _ => "",
    }
}

/// `questions.timeoutSecs` of settings.json: how long a detached turn's question waits for a
/// front end. A value that is not a whole number of at least 1 keeps the default, and is logged.
pub fn question_timeout(settings: &synapse_shared::settings::Settings) -> Duration {
    match settings
        .other
        .get("questions")
        .and_then(|q| q.get("timeoutSecs"))
    {
        None | Some(Value::Null) => QUESTION_TIMEOUT_DEFAULT,
        Some(v) => match v.as_u64() {
            Some(secs) if secs >= 1 => Duration::from_secs(secs),
            _ => {
                tracing::warn!(
                    "settings.json: questions.timeoutSecs must be a whole number of seconds of \
                     at least 1 (got {v}); using {}",
                    QUESTION_TIMEOUT_DEFAULT.as_secs()
                );
                QUESTION_TIMEOUT_DEFAULT
            }
        },
    }
}

#[cfg(test)]
#[path = "room_tests.rs"]
mod tests;
