//! One ACP session as a task: a [`Frontend`] on the client's session driver. The editor's
//! requests reach it as [`Command`]s (the connection's dispatch loop never waits on the daemon);
//! the driver hands it the session's events, which leave as `session/update` notifications
//! ([`map::updates`]), and its questions, which become `session/request_permission` requests
//! answered with exactly the option chosen. A turn's end answers the prompt in flight. The
//! daemon's file requests (only for an editor that offered `fs`) become `fs/read_text_file` and
//! `fs/write_text_file` requests, each on its own task, whose answers go back to the daemon.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use synapse_session::{
    Answer, Control, Decision, Event, FileOp, FileReply, FileRequest, FormAction, FrontEndMessage,
    Input, Mode, Question, TurnEnded,
};
use tokio::sync::mpsc;

use super::link::Link;
use super::map;
use crate::session::{Closed, Frontend, SessionSender, Step};

/// What the editor asks of a running session.
pub enum Command {
    /// `session/prompt`: run a turn, answer when it ends.
    Prompt(Input, Responder<acp::PromptResponse>),
    /// `session/cancel`: stop the running turn and what it runs.
    Cancel,
    /// `session/set_mode`.
    SetMode(Mode, Responder<acp::SetSessionModeResponse>),
}

/// The editor as the driver sees it.
struct Editor {
    cx: ConnectionTo<Client>,
    id: acp::SessionId,
    /// The session's folder: ACP wants absolute paths, the contract's file changes may be
    /// relative to it.
    cwd: std::path::PathBuf,
    /// Where the answers to the daemon's file requests go.
    sender: SessionSender,
}

impl Editor {
    /// Asks the editor for the file on a task of its own (the session's events go on meanwhile)
    /// and sends its answer back; the editor's error is the answer's.
    fn file_request(&self, request: FileRequest) {
        let (cx, id, sender) = (self.cx.clone(), self.id.clone(), self.sender.clone());
        tokio::spawn(async move {
            let result = match request.op {
                FileOp::Read => cx
                    .send_request(acp::ReadTextFileRequest::new(id, request.path))
                    .block_task()
                    .await
                    .map(|r| r.content),
                FileOp::Write => cx
                    .send_request(acp::WriteTextFileRequest::new(
                        id,
                        request.path,
                        request.content,
                    ))
                    .block_task()
                    .await
                    .map(|_| String::new()),
            };
            let reply = FileReply {
                id: request.id,
                result: result.map_err(|e| e.message.clone()),
            };
            let _ = sender.send(FrontEndMessage::FileReply(reply)).await;
        });
    }

    fn update(&self, update: acp::SessionUpdate) {
        let _ = self
            .cx
            .send_notification(acp::SessionNotification::new(self.id.clone(), update));
    }
}

impl Frontend for Editor {
    async fn on_event(&mut self, mut event: Event) {
        if let Event::FileRequest(request) = event {
            self.file_request(request);
            return;
        }
        if let Event::ToolDone(done) = &mut event {
            for change in &mut done.changes {
                change.path = self.cwd.join(&change.path).display().to_string();
            }
        }
        for update in map::updates(&event) {
            self.update(update);
        }
    }

    async fn answer(&mut self, question: Question) -> Answer {
        match question {
            Question::Approval(q) => {
                let request = acp::RequestPermissionRequest::new(
                    self.id.clone(),
                    map::permission_subject(&q),
                    map::permission_options(&q),
                );
                let decision = match self.cx.send_request(request).block_task().await {
                    Ok(response) => map::decision(&q, &response.outcome),
                    // An editor that cannot answer refuses (fail closed).
                    Err(_) => Decision::No,
                };
                Answer::Approval { id: q.id, decision }
            }
            // ACP has no stable form request yet: a form is dismissed, as by a person who
            // closes it.
            Question::Form(f) => Answer::Form {
                id: f.id,
                action: FormAction::Cancel,
                content_json: String::new(),
            },
        }
    }

    async fn on_closed(&mut self, _closed: &Closed) {}
}

/// Runs the session until the editor's connection or the daemon's stream closes.
pub async fn run(
    link: Link,
    id: acp::SessionId,
    cx: ConnectionTo<Client>,
    mut commands: mpsc::Receiver<Command>,
) {
    let Link {
        mut session, early, ..
    } = link;
    let cwd = std::path::PathBuf::from(&session.opened().cwd);
    let sender = session.sender();
    let mut editor = Editor {
        cx,
        id,
        cwd,
        sender,
    };
    let mut prompt: Option<Responder<acp::PromptResponse>> = None;
    if let Some(incoming) = early {
        session.deliver(&mut editor, incoming).await;
    }
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
                    } else if let Err(closed) = session.input(input).await {
                        let _ = responder.respond_with_error(gone(&closed));
                    } else {
                        prompt = Some(responder);
                    }
                }
                Some(Command::Cancel) => {
                    let _ = session.control(Control::Cancel).await;
                }
                Some(Command::SetMode(mode, responder)) => {
                    let _ = match session.control(Control::SetMode(Some(mode))).await {
                        Ok(()) => responder.respond(acp::SetSessionModeResponse::new()),
                        Err(closed) => responder.respond_with_error(gone(&closed)),
                    };
                }
            },
            incoming = session.next() => match session.deliver(&mut editor, incoming).await {
                Step::Continue => {}
                Step::TurnEnded(ended) => {
                    if let Some(responder) = prompt.take() {
                        let _ = match turn_answer(&ended) {
                            Ok(reason) => responder.respond(acp::PromptResponse::new(reason)),
                            Err(e) => responder.respond_with_error(e),
                        };
                    }
                }
                Step::Closed(closed) => {
                    if let Some(responder) = prompt.take() {
                        let _ = responder.respond_with_error(gone(&closed));
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

fn gone(closed: &Closed) -> Error {
    let why = match closed {
        Closed::Ended => "the daemon closed this session (it stopped or restarted)".to_string(),
        Closed::Broken { message, .. } => format!("the connection to the daemon broke: {message}"),
    };
    Error::new(
        ErrorCode::INTERNAL_ERROR,
        format!("{why}; open it again with session/load"),
    )
}
