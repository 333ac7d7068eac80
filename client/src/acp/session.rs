//! One ACP session as a task: it owns the session's [`Link`] to the daemon and the prompt in
//! flight. The editor's requests reach it as [`Command`]s (the connection's dispatch loop never
//! waits on the daemon); the daemon's events leave it as `session/update` notifications, its
//! approval questions as `session/request_permission` requests (each in its own task, so
//! events keep flowing while the editor decides), and a turn's end answers the prompt.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use synapse_session::{
    Answer, Control, Event, FormAction, FrontEndMessage, Input, Mode, Question, TurnEnded,
};
use tokio::sync::mpsc;

use super::link::{Link, Sender};
use super::map;

/// What the editor asks of a running session.
pub enum Command {
    /// `session/prompt`: run a turn, answer when it ends.
    Prompt(Input, Responder<acp::PromptResponse>),
    /// `session/cancel`: stop the running turn and what it runs.
    Cancel,
    /// `session/set_mode`.
    SetMode(Mode, Responder<acp::SetSessionModeResponse>),
}

/// Runs the session until the editor's connection or the daemon's stream closes.
pub async fn run(
    mut link: Link,
    id: acp::SessionId,
    cx: ConnectionTo<Client>,
    mut commands: mpsc::Receiver<Command>,
) {
    let sender = link.sender();
    let mut prompt: Option<Responder<acp::PromptResponse>> = None;
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                None => break,
                Some(Command::Prompt(input, responder)) => {
                    if prompt.is_some() {
                        let _ = responder.respond_with_error(Error::new(
                            ErrorCode::INVALID_REQUEST,
                            "a prompt is already running in this session: wait for it, or send \
                             session/cancel",
                        ));
                    } else if let Err(e) = sender.send(FrontEndMessage::Input(input)).await {
                        let _ = responder.respond_with_error(daemon_gone(&e));
                    } else {
                        prompt = Some(responder);
                    }
                }
                Some(Command::Cancel) => {
                    let _ = sender.send(FrontEndMessage::Control(Control::Cancel)).await;
                }
                Some(Command::SetMode(mode, responder)) => {
                    match sender.send(FrontEndMessage::Control(Control::SetMode(Some(mode)))).await {
                        Ok(()) => { let _ = responder.respond(acp::SetSessionModeResponse::new()); }
                        Err(e) => { let _ = responder.respond_with_error(daemon_gone(&e)); }
                    }
                }
            },
            event = link.next() => match event {
                Ok(Some(Event::TurnEnded(ended))) => {
                    if let Some(responder) = prompt.take() {
                        let _ = match turn_answer(&ended) {
                            Ok(reason) => responder.respond(acp::PromptResponse::new(reason)),
                            Err(e) => responder.respond_with_error(e),
                        };
                    }
                }
                Ok(Some(Event::Question(question))) => ask(&cx, &id, question, sender.clone()),
                Ok(Some(event)) => {
                    for update in map::updates(&event) {
                        let _ = cx.send_notification(acp::SessionNotification::new(id.clone(), update));
                    }
                }
                Ok(None) | Err(_) => {
                    if let Some(responder) = prompt.take() {
                        let _ = responder.respond_with_error(Error::new(
                            ErrorCode::INTERNAL_ERROR,
                            "the daemon closed this session (it stopped or restarted); open it \
                             again with session/load",
                        ));
                    }
                    break;
                }
            },
        }
    }
}

/// A prompt's answer for its turn's end: the stop reason, or for a failed turn an error that
/// says why (no API key is `auth_required`).
pub fn turn_answer(ended: &TurnEnded) -> Result<acp::StopReason, Error> {
    if let Some(reason) = map::stop_reason(&ended.reason) {
        return Ok(reason);
    }
    let message = if ended.message.is_empty() {
        "the model request failed".to_string()
    } else {
        ended.message.clone()
    };
    let code = if ended.error_kind == "auth" {
        ErrorCode::AUTH_REQUIRED
    } else {
        ErrorCode::INTERNAL_ERROR
    };
    Err(Error::new(code, message))
}

fn daemon_gone(e: &anyhow::Error) -> Error {
    Error::new(
        ErrorCode::INTERNAL_ERROR,
        format!("{e:#}; open the session again with session/load"),
    )
}

/// Puts a question to the editor and sends its answer back, in a task of its own.
fn ask(cx: &ConnectionTo<Client>, id: &acp::SessionId, question: Question, sender: Sender) {
    let cx2 = cx.clone();
    let id = id.clone();
    let _ = cx.spawn(async move {
        let answer = match question {
            Question::Approval(q) => {
                let request = acp::RequestPermissionRequest::new(
                    id,
                    map::permission_subject(&q),
                    map::permission_options(&q),
                );
                let decision = match cx2.send_request(request).block_task().await {
                    Ok(response) => map::decision(&q, &response.outcome),
                    // An editor that cannot answer refuses (fail closed).
                    Err(_) => synapse_session::Decision::No,
                };
                Answer::Approval {
                    id: q.id,
                    decision,
                }
            }
            // ACP has no stable form request yet: a form is dismissed, as by a person who
            // closes it.
            Question::Form(f) => Answer::Form {
                id: f.id,
                action: FormAction::Cancel,
                content_json: String::new(),
            },
        };
        let _ = sender.send(FrontEndMessage::Answer(answer)).await;
        Ok(())
    });
}
