//! `Chat.Attach`: the first client message opens or resumes a session; afterwards input starts
//! turns, cancel stops them, and the session's events are streamed back — first what shows a
//! running turn from where it is (its open calls and questions), then live. Any number of
//! clients attach to one session; a `detach` client starts its turn and leaves it running. A
//! client that opened with `editor_files` also gets the session's file requests, on its stream
//! only, and answers them (`crate::agent::editor_link`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::chat_server::Chat;
use synapse_shared::proto::client_message::Kind as In;
use synapse_shared::proto::{self, ChatEvent, ClientMessage};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::chat_wire::to_wire;
use crate::agent::attach::Attach;
use crate::agent::editor_link::{EditorAttachment, EditorLink};
use crate::agent::session::{ChatSession, RunOptions, SessionEvent};
use crate::agent::sessions::{OwnMcpServers, Resume};
use crate::lifecycle::peer::refuse_confined;
use crate::state::DaemonState;
use crate::workspace::SettingsHandle;

/// Events queued per attached client.
const CLIENT_QUEUE: usize = 1024;

pub struct ChatService {
    state: Arc<DaemonState>,
}

impl ChatService {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Chat for ChatService {
    type AttachStream = EventStream;

    /// → `ChatSessions::attach` (daemon/src/agent/attach.rs); inputs → `ChatSession::start_turn`.
    async fn attach(
        &self,
        request: Request<Streaming<ClientMessage>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        refuse_confined(&request, "starting an agent session")?;
        let mut incoming = request.into_inner();
        let open = match incoming.next().await {
            Some(Ok(ClientMessage {
                kind: Some(In::Open(open)),
            })) => open,
            Some(Ok(_)) => {
                return Err(Status::invalid_argument(
                    "the first message must open a session",
                ));
            }
            Some(Err(e)) => return Err(e),
            None => {
                return Err(Status::cancelled(
                    "the client left before opening a session",
                ));
            }
        };
        let resume = if !open.resume_id.is_empty() {
            Resume::Id(open.resume_id.clone())
        } else if open.resume_latest {
            Resume::Latest
        } else {
            Resume::New
        };
        // Opening a session reads the project's files (skills, instructions, MCP configs) under
        // locks every project shares: on the blocking pool, never on a runtime thread that
        // `daemon status` and other projects' sessions need.
        let state = self.state.clone();
        // A detaching client asks like an interactive one: its questions wait for a front end.
        let detach = open.detach;
        let editor_files = open.editor_files;
        let non_interactive = open.non_interactive && !detach;
        let attached = tokio::task::spawn_blocking(move || {
            let mcp = state.mcp.clone();
            state.chats.attach(
                Attach {
                    cwd: PathBuf::from(&open.cwd),
                    env: open.env.into_iter().collect::<HashMap<_, _>>(),
                    model: Some(open.model).filter(|m| !m.is_empty()),
                    resume,
                    permission_mode: open.permission_mode,
                    allow: open.allow,
                    allowed_tools: open.allowed_tools,
                    disallowed_tools: open.disallowed_tools,
                    non_interactive,
                    approve_all: open.approve_all,
                    cleared: open.cleared,
                    add_dirs: open.add_dirs,
                    session_id: open.session_id,
                    settings_json: open.settings_json,
                    fallback_models: open.fallback_models,
                    bypass_permissions: open.bypass_permissions,
                    own_mcp: OwnMcpServers {
                        servers: open
                            .mcp_servers
                            .into_iter()
                            .map(|s| (s.name, s.config_json))
                            .collect(),
                        strict: open.strict_mcp_config,
                    },
                    run: RunOptions {
                        system_prompt: Some(open.system_prompt).filter(|s| !s.is_empty()),
                        append_system_prompt: Some(open.append_system_prompt)
                            .filter(|s| !s.is_empty()),
                        max_turns: Some(open.max_turns).filter(|n| *n > 0),
                        ..RunOptions::default()
                    },
                },
                &|root| {
                    synapse_mcp::approval::waiting_notice(&mcp.workspace(root, None))
                        .into_iter()
                        .collect()
                },
            )
        })
        .await
        .map_err(|e| Status::internal(format!("opening the session failed: {e}")))?
        .map_err(Status::from)?;
        let session = attached.session;
        let (turns, messages) = session.counts_now();
        let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
        let first = ChatEvent {
            kind: Some(Ev::Opened(proto::SessionOpened {
                session_id: session.id.clone(),
                model: session.model(),
                cwd: session.cwd.display().to_string(),
                resumed: attached.resumed,
                messages: messages as u32,
                warnings: attached.warnings,
                turns,
                turn_running: session.is_running(),
                broken_skills: self.state.skills.broken_in(&session.cwd).len() as u32,
                instructions: session
                    .instruction_files()
                    .into_iter()
                    .map(|f| proto::InstructionFile {
                        path: f.path.display().to_string(),
                        shown: f.shown,
                        bytes: f.bytes,
                        cut: f.cut,
                    })
                    .collect(),
            })),
        };
        let _ = tx.send(Ok(first)).await;
        if let Some((mode, summary)) = session.permission_summary() {
            let event = ChatEvent {
                kind: Some(Ev::PermissionMode(proto::PermissionModeChanged {
                    mode,
                    summary,
                })),
            };
            let _ = tx.send(Ok(event)).await;
        }
        for text in attached.notices {
            let _ = tx
                .send(Ok(ChatEvent {
                    kind: Some(Ev::Notice(proto::Notice { text })),
                }))
                .await;
        }
        let (events, catch_up) = session.join();
        let forwarder = synapse_command::tasks::spawn(forward_events(
            session.clone(),
            catch_up,
            events,
            tx.clone(),
            self.state.shell.clone(),
        ));
        let editor = editor_files.then(|| attach_editor(&session, tx.clone()));
        let release = non_interactive.then(|| self.state.clone());
        let settings = self.state.settings_handle.clone();
        synapse_command::tasks::spawn(async move {
            let client = Client {
                non_interactive,
                detach,
            };
            let link = editor.as_ref().map(|(link, _)| link.clone());
            read_client(session.clone(), incoming, tx, client, settings, link).await;
            // The editor left with its client: its requests fall back to disk.
            drop(editor);
            if let Some(state) = release {
                // This client is gone: stop forwarding to it, so only other clients still count.
                forwarder.abort();
                let _ = forwarder.await;
                state.chats.release_run(&session, &state.shell).await;
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// How a client takes part in its session.
#[derive(Clone, Copy)]
struct Client {
    /// `synapse run`: its turn is cancelled when it leaves as the last front end.
    non_interactive: bool,
    /// `synapse run --detach`: its turn goes on without it.
    detach: bool,
}

/// This client becomes the session's editor: the session's file requests go out on its stream
/// (only its), until the attachment is dropped when it leaves.
fn attach_editor(
    session: &Arc<ChatSession>,
    tx: mpsc::Sender<Result<ChatEvent, Status>>,
) -> (Arc<EditorLink>, EditorAttachment) {
    let (link, mut requests) =
        EditorLink::new(synapse_command::editor_files::EDITOR_ANSWER_TIMEOUT);
    let attachment = session.editor_slot().attach(link.clone(), &session.cwd);
    let gone = link.gone().clone();
    synapse_command::tasks::spawn(async move {
        loop {
            let request = tokio::select! {
                request = requests.recv() => request,
                _ = gone.cancelled() => None,
            };
            let Some(request) = request else { return };
            let wire = synapse_shared::session_wire::event_to_wire(
                synapse_session::Event::FileRequest(request),
            );
            if tx.send(Ok(wire)).await.is_err() {
                return;
            }
        }
    });
    (link, attachment)
}

/// Session events → this client, until it goes away: `catch_up` first, then live ones.
async fn forward_events(
    session: Arc<ChatSession>,
    catch_up: Vec<SessionEvent>,
    mut events: broadcast::Receiver<SessionEvent>,
    tx: mpsc::Sender<Result<ChatEvent, Status>>,
    shell: Arc<crate::shell::ShellSessions>,
) {
    let mut catch_up = catch_up.into_iter();
    loop {
        let event = match catch_up.next() {
            Some(e) => e,
            None => match events.recv().await {
                Ok(e) => e,
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    SessionEvent::Error(format!("this client fell behind and missed {n} events"))
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        let look = |command: &str| {
            crate::shell::call_kind::describe(shell.router().commands(), command, &session.cwd)
        };
        let mut wire = to_wire(event, session.context_window(), &look);
        // The REPL's status line shows the session's running jobs after each turn.
        if let Some(Ev::TurnFinished(t)) = wire.kind.as_mut() {
            t.background_jobs = u32::try_from(shell.running_jobs_of(&session.id)).unwrap_or(0);
        }
        if tx.send(Ok(wire)).await.is_err() {
            return;
        }
    }
}

/// Client messages → the session.
async fn read_client(
    session: Arc<ChatSession>,
    mut incoming: Streaming<ClientMessage>,
    tx: mpsc::Sender<Result<ChatEvent, Status>>,
    client: Client,
    settings: Arc<SettingsHandle>,
    editor: Option<Arc<EditorLink>>,
) {
    read_messages(&session, &mut incoming, &tx, client, &settings, editor).await;
    session.client_left(client.non_interactive);
}

async fn read_messages(
    session: &Arc<ChatSession>,
    incoming: &mut Streaming<ClientMessage>,
    tx: &mpsc::Sender<Result<ChatEvent, Status>>,
    client: Client,
    settings: &SettingsHandle,
    editor: Option<Arc<EditorLink>>,
) {
    while let Some(Ok(message)) = incoming.next().await {
        match message.kind {
            Some(In::Input(input)) => {
                // A settings.json that stops parsing is reported on every turn until fixed.
                if let Some(text) = settings.error() {
                    let _ = tx
                        .send(Ok(ChatEvent {
                            kind: Some(Ev::Notice(proto::Notice { text })),
                        }))
                        .await;
                }
                let text = synapse_shared::session_wire::input_from_wire(input)
                    .map_err(|e| e.to_string())
                    .and_then(|input| {
                        crate::agent::input::turn_text(&input).map_err(|e| e.to_string())
                    });
                let started = match text {
                    Ok(text) if client.detach => {
                        session.start_detached_turn(text).map_err(|e| e.to_string())
                    }
                    Ok(text) => session.start_turn(text).map_err(|e| e.to_string()),
                    Err(e) => Err(e),
                };
                match started {
                    Err(e) => {
                        let _ = tx.send(Ok(error_event(e))).await;
                    }
                    Ok(()) if client.detach => {
                        let text = format!(
                            "{}; `synapse attach {}` shows it.",
                            synapse_session::DETACHED_NOTICE,
                            session.id
                        );
                        let _ = tx
                            .send(Ok(ChatEvent {
                                kind: Some(Ev::Notice(proto::Notice { text })),
                            }))
                            .await;
                    }
                    Ok(()) => {}
                }
            }
            Some(In::Cancel(_)) => {
                session.cancel();
            }
            Some(In::Approval(answer))
                if !session.answer_approval(&answer.request_id, &answer.decision) =>
            {
                let message = format!(
                    "no open approval request {} (it was answered, possibly at another front \
                     end, or its turn ended)",
                    answer.request_id
                );
                let _ = tx.send(Ok(error_event(message))).await;
            }
            Some(In::Approval(_)) => {}
            Some(In::Elicitation(answer)) => {
                if let Err(e) = session.answer_elicitation(
                    &answer.request_id,
                    &answer.action,
                    &answer.content_json,
                ) {
                    let _ = tx.send(Ok(error_event(e.to_string()))).await;
                }
            }
            Some(In::Compact(_)) => {
                if let Err(e) = session.start_compaction() {
                    let _ = tx.send(Ok(error_event(e.to_string()))).await;
                }
            }
            Some(In::SetModel(set)) => {
                session.set_model(Some(set.model).filter(|m| !m.trim().is_empty()));
                let changed = ChatEvent {
                    kind: Some(Ev::ModelChanged(proto::ModelChanged {
                        model: session.model(),
                    })),
                };
                let _ = tx.send(Ok(changed)).await;
            }
            Some(In::SetPermissionMode(set)) => {
                let event = match session.set_permission_mode(&set.mode).await {
                    Ok((mode, summary)) => {
                        Ev::PermissionMode(proto::PermissionModeChanged { mode, summary })
                    }
                    Err(e) => Ev::Error(proto::ErrorEvent {
                        message: e.to_string(),
                    }),
                };
                let _ = tx.send(Ok(ChatEvent { kind: Some(event) })).await;
            }
            Some(In::FileReply(reply)) => {
                let message = ClientMessage {
                    kind: Some(In::FileReply(reply)),
                };
                let problem = match (
                    &editor,
                    synapse_shared::session_wire::message_from_wire(message),
                ) {
                    (None, _) => Some(
                        "a file reply from a client that did not open with editor_files".into(),
                    ),
                    (Some(link), Ok(synapse_session::FrontEndMessage::FileReply(reply))) => {
                        let id = reply.id.clone();
                        (!link.reply(reply)).then(|| {
                            format!("no open file request {id} (it timed out or its turn ended)")
                        })
                    }
                    (Some(_), Ok(_)) => None,
                    (Some(_), Err(e)) => Some(e.to_string()),
                };
                if let Some(message) = problem {
                    let _ = tx.send(Ok(error_event(message))).await;
                }
            }
            Some(In::Open(_)) => {
                let _ = tx
                    .send(Ok(error_event("this stream already has a session".into())))
                    .await;
            }
            None => {}
        }
    }
}

fn error_event(message: String) -> ChatEvent {
    ChatEvent {
        kind: Some(Ev::Error(proto::ErrorEvent { message })),
    }
}
