//! The [`Frontend`] trait: what a front end of a session does with what the session reports.
//! The driver ([`super::Session`]) calls it; a front end never reads the wire itself.

use synapse_session::{Answer, Decision, Event, FormAction, Question};

use super::Closed;

/// A front end of a session: the REPL, `synapse run` (text, json, stream-json), an editor over
/// the Agent Client Protocol, another agent over MCP. The driver hands it every event in order
/// ([`Frontend::on_event`]), asks it every question ([`Frontend::answer`]) and tells it once
/// when the session's stream is gone ([`Frontend::on_closed`]).
///
/// The methods are `async` because answering (a key, an editor's permission dialog) and
/// printing (a spinner) may wait; they run on the driver's task, so their futures need not be
/// `Send`.
#[allow(async_fn_in_trait)]
pub trait Frontend {
    /// An event of the session, questions excepted. [`Event::TurnEnded`] comes here too (and
    /// the driver's turn methods also return it, so the caller decides what follows).
    async fn on_event(&mut self, event: Event);

    /// A question of the session; the answer goes back to it. A front end with nobody to ask
    /// answers [`refusal`]. When the stream closes while it waits, the driver drops this future
    /// and calls [`Frontend::on_closed`].
    async fn answer(&mut self, question: Question) -> Answer;

    /// The session's stream closed (the daemon stopped or the connection broke). Called once;
    /// later turns on the same [`super::Session`] end at once with the same [`Closed`].
    async fn on_closed(&mut self, closed: &Closed);
}

/// The answer of a front end that nobody can answer for: the call is not approved, the form is
/// declined.
pub fn refusal(question: &Question) -> Answer {
    match question {
        Question::Approval(q) => Answer::Approval {
            id: q.id.clone(),
            decision: Decision::No,
        },
        Question::Form(q) => Answer::Form {
            id: q.id.clone(),
            action: FormAction::Decline,
            content_json: String::new(),
        },
    }
}
