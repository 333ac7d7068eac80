//! Forms MCP servers ask a chat session's user to fill in (`elicitation/create`): the form goes
//! to the attached clients as an event and the first answer that fits it decides (every front end
//! then sees it closed). With no client attached nobody can answer, so the form is declined at
//! once, unless the turn is detached: then it waits for a front end up to the question timeout
//! (and is cancelled when that passes); when the last client of an attached turn goes away,
//! open forms are answered "cancel" ([`SessionForms::cancel_all_pending`]); a form whose tool
//! call ended is withdrawn. An accepted answer is checked against the form
//! ([`synapse_shared::elicit::Form::check`]) before the server sees it. Every outcome is logged.

use parking_lot::Mutex;
use std::collections::HashMap;

use serde_json::{Map, Value};
use synapse_shared::elicit::Form;
use tokio::sync::oneshot;

use super::room::SessionRoom;
use super::session::SessionEvent;
use synapse_command::asker::{FormAnswer, FormRequest};
use synapse_session::ClosedWhy;

pub struct SessionForms {
    session_id: String,
    events: SessionRoom,
    pending: Mutex<HashMap<String, Pending>>,
}

/// Why a client's answer to a form was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormAnswerError {
    /// No open form has this id.
    #[error("no open form {0} (it was answered, or its tool call ended)")]
    NoOpenForm(String),
    /// The action is none of accept, decline, cancel.
    #[error("unknown form action {0:?}: use accept, decline or cancel")]
    UnknownAction(String),
    /// An "accept" whose values are not a JSON object; the form stays open.
    #[error("the answer to form {id} is not a JSON object: {reason}")]
    NotAnObject {
        /// The form's id.
        id: String,
        /// What the JSON parser said.
        reason: String,
    },
    /// An "accept" whose values do not fit the form; the form stays open.
    #[error("the answer does not fit the form of MCP server {server}: {problem}")]
    DoesNotFit {
        /// The server that asked.
        server: String,
        /// The field at fault and why.
        problem: synapse_shared::elicit::FormError,
    },
}

struct Pending {
    server: String,
    form: Form,
    reply: oneshot::Sender<FormAnswer>,
}

impl SessionForms {
    pub fn new(session_id: String, events: impl Into<SessionRoom>) -> Self {
        Self {
            session_id,
            events: events.into(),
            pending: Mutex::default(),
        }
    }

    /// Shows the form to the session's clients and waits for the answer.
    pub async fn ask(&self, request: FormRequest) -> FormAnswer {
        let session = &self.session_id;
        let server = &request.server;
        let Some(limit) = self.events.can_ask() else {
            tracing::info!(%session, %server, "form declined: no client to ask");
            return FormAnswer::Decline;
        };
        let form = match Form::from_schema(&request.schema) {
            Ok(form) => form,
            Err(e) => {
                tracing::warn!(%session, %server, "form declined: {e}");
                return FormAnswer::Decline;
            }
        };
        let id = format!("form-{:08x}", fastrand::u32(..));
        let (reply, answered) = oneshot::channel();
        self.lock().insert(
            id.clone(),
            Pending {
                server: server.clone(),
                form,
                reply,
            },
        );
        // Dropped with the call that asked: an unanswered form is withdrawn.
        let _open = Withdraw {
            forms: self,
            id: id.clone(),
        };
        let _ = self.events.send(SessionEvent::Elicitation {
            id,
            server: server.clone(),
            message: request.message,
            schema_json: request.schema.to_string(),
            url: request.url.unwrap_or_default(),
        });
        let answer = match limit {
            None => answered.await.unwrap_or(FormAnswer::Cancel),
            Some(limit) => match tokio::time::timeout(limit, answered).await {
                Ok(answer) => answer.unwrap_or(FormAnswer::Cancel),
                Err(_) => {
                    if self.lock().remove(&_open.id).is_some() {
                        self.closed(&_open.id, "cancel", ClosedWhy::TimedOut);
                    }
                    let _ = self.events.send(SessionEvent::Notice(format!(
                        "Nobody answered the form of MCP server {server} within {}s \
                         (questions.timeoutSecs in settings.json), so it was cancelled.",
                        limit.as_secs()
                    )));
                    FormAnswer::Cancel
                }
            },
        };
        tracing::info!(%session, %server, action = action(&answer), "form answered");
        answer
    }

    /// A client's answer: "accept" with `content_json` (a JSON object), "decline" or "cancel".
    /// `Err` says why it was not taken: no such open form, an unknown action, or values that do
    /// not fit the form (which then stays open).
    pub fn answer(
        &self,
        id: &str,
        action: &str,
        content_json: &str,
    ) -> Result<(), FormAnswerError> {
        let mut pending = self.lock();
        let Some(open) = pending.get(id) else {
            return Err(FormAnswerError::NoOpenForm(id.to_string()));
        };
        let answer = match action {
            "accept" => {
                let content: Map<String, Value> =
                    serde_json::from_str(content_json).map_err(|e| {
                        FormAnswerError::NotAnObject {
                            id: id.to_string(),
                            reason: e.to_string(),
                        }
                    })?;
                open.form
                    .check(&content)
                    .map_err(|problem| FormAnswerError::DoesNotFit {
                        server: open.server.clone(),
                        problem,
                    })?;
                FormAnswer::Accept(content)
            }
            "decline" => FormAnswer::Decline,
            "cancel" => FormAnswer::Cancel,
            other => return Err(FormAnswerError::UnknownAction(other.to_string())),
        };
        let word = self::action(&answer);
        if let Some(open) = pending.remove(id) {
            let _ = open.reply.send(answer);
        }
        drop(pending);
        self.closed(id, word, ClosedWhy::Answered);
        Ok(())
    }

    /// Tells every front end the form is no longer open.
    fn closed(&self, id: &str, answer: &str, why: ClosedWhy) {
        let _ = self.events.send(SessionEvent::QuestionClosed {
            id: id.to_string(),
            answer: answer.to_string(),
            why,
        });
    }

    /// Answers every open form "cancel" (its client went away); returns how many there were.
    pub fn cancel_all_pending(&self) -> usize {
        let open: Vec<_> = self.lock().drain().collect();
        let count = open.len();
        for (id, p) in open {
            tracing::info!(session = %self.session_id, form = %id, server = %p.server, "form cancelled: its client went away");
            let _ = p.reply.send(FormAnswer::Cancel);
            self.closed(&id, "cancel", ClosedWhy::Withdrawn);
        }
        count
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock()
    }
}

fn action(answer: &FormAnswer) -> &'static str {
    match answer {
        FormAnswer::Accept(_) => "accept",
        FormAnswer::Decline => "decline",
        FormAnswer::Cancel => "cancel",
    }
}

/// Removes a form nobody answered when the call that asked stops waiting, and says so.
struct Withdraw<'a> {
    forms: &'a SessionForms,
    id: String,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Some(open) = self.forms.lock().remove(&self.id) {
            tracing::info!(session = %self.forms.session_id, form = %self.id, server = %open.server, "form withdrawn: its tool call ended");
            self.forms.closed(&self.id, "cancel", ClosedWhy::Withdrawn);
            let _ = self.forms.events.send(SessionEvent::Notice(format!(
                "The form of MCP server {} was withdrawn: the tool call that asked has ended.",
                open.server
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::sync::broadcast;

    fn request() -> FormRequest {
        FormRequest {
            server: "every".into(),
            message: "Who are you?".into(),
            schema: json!({"type": "object", "properties": {
                "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}
            }, "required": ["name"]}),
            url: None,
        }
    }

    /// The id of the next form event a client sees.
    async fn next_form(rx: &mut tokio::sync::broadcast::Receiver<SessionEvent>) -> String {
        loop {
            if let SessionEvent::Elicitation {
                id, schema_json, ..
            } = rx.recv().await.unwrap()
            {
                // The schema reaches the client in the server's order.
                assert!(schema_json.find("name").unwrap() < schema_json.find("age").unwrap());
                return id;
            }
        }
    }

    #[tokio::test]
    async fn nobody_attached_declines_at_once() {
        let (events, _) = broadcast::channel(8);
        let forms = SessionForms::new("s".into(), events);
        assert_eq!(forms.ask(request()).await, FormAnswer::Decline);
    }

    #[tokio::test]
    async fn an_answer_that_fits_is_passed_on_and_one_that_does_not_keeps_the_form_open() {
        let (events, mut rx) = broadcast::channel(8);
        let forms = std::sync::Arc::new(SessionForms::new("s".into(), events));
        let asking = tokio::spawn({
            let forms = forms.clone();
            async move { forms.ask(request()).await }
        });
        let id = next_form(&mut rx).await;
        let bad = forms.answer(&id, "accept", r#"{"age": 3}"#).unwrap_err();
        assert!(
            matches!(&bad, FormAnswerError::DoesNotFit { server, .. } if server == "every"),
            "{bad:?}"
        );
        assert!(bad.to_string().contains("\"name\": is required"), "{bad}");
        assert_eq!(
            forms.answer(&id, "maybe", ""),
            Err(FormAnswerError::UnknownAction("maybe".into()))
        );
        forms
            .answer(&id, "accept", r#"{"name": "Ada", "age": 36}"#)
            .unwrap();
        let answer = asking.await.unwrap();
        assert_eq!(
            answer,
            FormAnswer::Accept(
                json!({"name": "Ada", "age": 36})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert_eq!(
            forms.answer(&id, "decline", ""),
            Err(FormAnswerError::NoOpenForm(id.clone())),
            "answered once"
        );
    }

    #[tokio::test]
    async fn a_client_leaving_cancels_and_an_ended_call_withdraws() {
        let (events, mut rx) = broadcast::channel(8);
        let forms = std::sync::Arc::new(SessionForms::new("s".into(), events));
        let asking = tokio::spawn({
            let forms = forms.clone();
            async move { forms.ask(request()).await }
        });
        next_form(&mut rx).await;
        assert_eq!(forms.cancel_all_pending(), 1);
        assert_eq!(asking.await.unwrap(), FormAnswer::Cancel);

        let asking = tokio::spawn({
            let forms = forms.clone();
            async move { forms.ask(request()).await }
        });
        let id = next_form(&mut rx).await;
        asking.abort();
        let _ = asking.await;
        // Every front end takes the form down, and is told why.
        assert!(matches!(
            rx.recv().await.unwrap(),
            SessionEvent::QuestionClosed { id: closed, why: ClosedWhy::Withdrawn, .. } if closed == id
        ));
        assert!(
            matches!(rx.recv().await.unwrap(), SessionEvent::Notice(n) if n.contains("withdrawn"))
        );
        assert!(forms.answer(&id, "decline", "").is_err());
    }
}
