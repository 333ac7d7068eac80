//! The client's one session driver. Every front end — the REPL, `synapse run` (text, json,
//! stream-json), and any added later (an editor over the Agent Client Protocol, another agent
//! over MCP) — opens its session here ([`Session::open`], [`open`]), reads it as contract
//! [`synapse_session::Event`]s (the [`pump`] converts the gRPC stream through
//! `synapse_shared::session_wire`; nothing else in the client matches proto events), gets its
//! questions routed to it and sends input, controls and answers back through here.
//!
//! Adding a front end is a [`Frontend`] impl in the client and nothing in the daemon:
//!
//! ```ignore
//! let mut session = Session::connect(&paths, &OpenOptions::default()).await?;
//! let end = session.run_turn(&mut my_front_end, Input::text("hello")).await;
//! ```
//!
//! A turn ends on [`Event::TurnEnded`] with its stop reason ([`Session::run_turn`],
//! [`Session::follow`]); a front end that also waits on other things (keys, signals, the
//! editor's requests) selects on [`Session::next`] itself and hands each [`Incoming`] to
//! [`Session::deliver`]. [`SessionSender`] sends from elsewhere (a signal handler's cancel).

mod frontend;
mod open;
pub mod pump;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use synapse_session::{
    Answer, Control, Event, FrontEndMessage, Input, Opened, Question, TurnEnded,
};
use synapse_shared::proto::{ChatEvent, ClientMessage};
use synapse_shared::session_wire;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

pub use frontend::{Frontend, refusal};
pub use open::{OpenOptions, REOPEN_TIMEOUT, Scripting};
pub use pump::{Closed, Incoming};

/// An open session: its events come through [`Session::next`] (or the turn methods), what the
/// front end says goes through [`Session::send`].
pub struct Session {
    channel: Channel,
    opened: Opened,
    outgoing: mpsc::Sender<ClientMessage>,
    events: mpsc::Receiver<Incoming>,
    /// Events read while a question was being answered, delivered next.
    pending: VecDeque<Incoming>,
    pump: JoinHandle<()>,
    /// Set once the stream closed (reported once; every later turn ends with it at once).
    closed: Option<Closed>,
}

/// Where a delivered event leaves the turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The turn goes on.
    Continue,
    /// The turn ended (the front end saw the event too).
    TurnEnded(TurnEnded),
    /// The stream closed (the front end was told).
    Closed(Closed),
}

/// A handle that sends to the session from anywhere (a signal handler, an editor's cancel).
#[derive(Clone)]
pub struct SessionSender {
    outgoing: mpsc::Sender<ClientMessage>,
}

impl SessionSender {
    /// Sends a front end's message; an error means the stream to the daemon is gone.
    pub async fn send(&self, message: FrontEndMessage) -> Result<(), Closed> {
        self.outgoing
            .send(session_wire::message_to_wire(message))
            .await
            .map_err(|_| Closed::Ended)
    }

    /// Sends a control (cancel, model, mode, compact).
    pub async fn control(&self, control: Control) -> Result<(), Closed> {
        self.send(FrontEndMessage::Control(control)).await
    }
}

impl Session {
    /// A session over an already opened stream (`Session::open` does the opening; the unit
    /// tests script `events`).
    pub(crate) fn from_parts<S>(
        channel: Channel,
        opened: Opened,
        outgoing: mpsc::Sender<ClientMessage>,
        events: S,
    ) -> Self
    where
        S: futures::Stream<Item = Result<ChatEvent, tonic::Status>> + Send + Unpin + 'static,
    {
        let (events, pump) = pump::spawn(events);
        Self {
            channel,
            opened,
            outgoing,
            events,
            pending: VecDeque::new(),
            pump,
            closed: None,
        }
    }

    /// What the daemon said when the session opened.
    pub fn opened(&self) -> &Opened {
        &self.opened
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.opened.session_id
    }

    /// The connection to the daemon, for its other services.
    pub fn channel(&self) -> &Channel {
        &self.channel
    }

    /// False once the stream closed.
    pub fn is_up(&self) -> bool {
        self.closed.is_none()
    }

    /// A sender that can be moved elsewhere.
    pub fn sender(&self) -> SessionSender {
        SessionSender {
            outgoing: self.outgoing.clone(),
        }
    }

    /// Sends a front end's message; an error means the stream to the daemon is gone.
    pub async fn send(&mut self, message: FrontEndMessage) -> Result<(), Closed> {
        if let Some(closed) = &self.closed {
            return Err(closed.clone());
        }
        let sent = self
            .outgoing
            .send(session_wire::message_to_wire(message))
            .await;
        sent.map_err(|_| Closed::Ended)
    }

    /// Sends a user message.
    pub async fn input(&mut self, input: Input) -> Result<(), Closed> {
        self.send(FrontEndMessage::Input(input)).await
    }

    /// Sends a control (cancel, model, mode, compact).
    pub async fn control(&mut self, control: Control) -> Result<(), Closed> {
        self.send(FrontEndMessage::Control(control)).await
    }

    /// Sends an answer to one of the session's questions.
    pub async fn answer(&mut self, answer: Answer) -> Result<(), Closed> {
        self.send(FrontEndMessage::Answer(answer)).await
    }

    /// The next event, or the stream's close (once); after that it never resolves, so a
    /// `select!` on it goes quiet.
    pub async fn next(&mut self) -> Incoming {
        if let Some(incoming) = self.pending.pop_front() {
            return self.seen(incoming);
        }
        if self.closed.is_some() {
            return std::future::pending().await;
        }
        let incoming = self.recv().await;
        self.seen(incoming)
    }

    async fn recv(&mut self) -> Incoming {
        self.events
            .recv()
            .await
            .unwrap_or(Incoming::Closed(Closed::Ended))
    }

    fn seen(&mut self, incoming: Incoming) -> Incoming {
        if let Incoming::Closed(closed) = &incoming {
            self.closed = Some(closed.clone());
        }
        incoming
    }

    /// Hands one incoming event to the front end: a question goes to [`Frontend::answer`] and
    /// its answer back to the session, the stream's close to [`Frontend::on_closed`], anything
    /// else to [`Frontend::on_event`].
    pub async fn deliver<F: Frontend>(&mut self, frontend: &mut F, incoming: Incoming) -> Step {
        match incoming {
            Incoming::Closed(closed) => {
                frontend.on_closed(&closed).await;
                Step::Closed(closed)
            }
            Incoming::Event(Event::Question(question)) => {
                match self.ask(frontend, question).await {
                    Ok(Some(answer)) => {
                        // A stream that closed meanwhile shows up as the next event.
                        let _ = self.answer(answer).await;
                        Step::Continue
                    }
                    // Closed before this front end answered: its `QuestionClosed` comes next.
                    Ok(None) => Step::Continue,
                    Err(closed) => {
                        self.closed = Some(closed.clone());
                        frontend.on_closed(&closed).await;
                        Step::Closed(closed)
                    }
                }
            }
            Incoming::Event(Event::TurnEnded(end)) => {
                frontend.on_event(Event::TurnEnded(end.clone())).await;
                Step::TurnEnded(end)
            }
            Incoming::Event(event) => {
                frontend.on_event(event).await;
                Step::Continue
            }
        }
    }

    /// Asks the front end while the stream is watched: events that arrive meanwhile wait in
    /// `pending`; a close drops the question. So does the question closing first (another
    /// front end of the session answered it — the first answer wins — or it timed out): the
    /// front end's prompt is dropped, `Ok(None)`, and it gets that `QuestionClosed` next.
    async fn ask<F: Frontend>(
        &mut self,
        frontend: &mut F,
        question: Question,
    ) -> Result<Option<Answer>, Closed> {
        let id = question.id().to_string();
        if self.pending.iter().any(|e| closes(e, &id)) {
            // Closed before it was even shown: the front end only hears that.
            return Ok(None);
        }
        let answer = frontend.answer(question);
        tokio::pin!(answer);
        let mut watching = self.closed.is_none();
        loop {
            tokio::select! {
                // The front end's answer first: it is always asked (its prompt shown) before a
                // close or another front end's answer can drop the question.
                biased;
                answer = &mut answer => return Ok(Some(answer)),
                incoming = self.events.recv(), if watching => match incoming {
                    Some(Incoming::Closed(closed)) => return Err(closed),
                    None => return Err(Closed::Ended),
                    Some(event) if closes(&event, &id) => {
                        self.pending.push_back(event);
                        return Ok(None);
                    }
                    Some(event) => {
                        self.pending.push_back(event);
                        watching = self.pending.len() < PENDING_LIMIT;
                    }
                },
            }
        }
    }

    /// Sends `input` and delivers the session's events to `frontend` until the turn ends.
    pub async fn run_turn<F: Frontend>(
        &mut self,
        frontend: &mut F,
        input: Input,
    ) -> Result<TurnEnded, Closed> {
        if let Err(closed) = self.input(input).await {
            return Err(self.close_once(frontend, closed).await);
        }
        self.follow(frontend).await
    }

    /// Delivers the session's events to `frontend` until the running turn ends (a turn that
    /// was running when this front end attached, or one just started).
    pub async fn follow<F: Frontend>(&mut self, frontend: &mut F) -> Result<TurnEnded, Closed> {
        if let Some(closed) = &self.closed
            && self.pending.is_empty()
        {
            return Err(closed.clone());
        }
        loop {
            let incoming = self.next().await;
            match self.deliver(frontend, incoming).await {
                Step::Continue => {}
                Step::TurnEnded(end) => return Ok(end),
                Step::Closed(closed) => return Err(closed),
            }
        }
    }

    /// Reports a close found by a failed send once, as the pump would.
    async fn close_once<F: Frontend>(&mut self, frontend: &mut F, closed: Closed) -> Closed {
        if let Some(known) = &self.closed {
            return known.clone();
        }
        self.closed = Some(closed.clone());
        frontend.on_closed(&closed).await;
        closed
    }
}

/// True for the event that closes question `id`.
fn closes(incoming: &Incoming, id: &str) -> bool {
    matches!(incoming, Incoming::Event(Event::QuestionClosed(c)) if c.id == id)
}

/// Events kept while a question waits; past this the stream is read again after the answer.
const PENDING_LIMIT: usize = 1024;

impl Drop for Session {
    fn drop(&mut self) {
        self.pump.abort();
    }
}
