//! `synapse acp`: Synapse as an Agent Client Protocol agent over stdio, for editors (Zed,
//! JetBrains, Neovim's CodeCompanion and avante, Emacs's agent-shell). A thin client of the
//! daemon like the REPL: each ACP session is a Synapse session opened in the editor's folder.
//!
//! Flow: the connection ([`serve`]) answers `initialize` at once (the daemon is reached in the
//! background meanwhile), and hands every session request to a task, so its dispatch loop never
//! waits on the daemon. `session/new` and `session/load` open a [`link::Link`] and start the
//! session's own task ([`session::run`]), which streams the contract's events as
//! `session/update`s ([`map`]), asks the gate's questions with `session/request_permission` and
//! answers `session/prompt` when the turn ends; `session/cancel` and `session/set_mode` reach it
//! as [`session::Command`]s. `session/load` replays the saved history first ([`history`]).
//! An editor that offers `fs` (both `readTextFile` and `writeTextFile`) in `initialize` becomes
//! the storage of its sessions' `read`, `write` and `edit` inside their folder: the daemon's file
//! requests are answered with `fs/read_text_file` and `fs/write_text_file` ([`session`]).

mod commands;
mod history;
mod link;
pub mod map;
mod session;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, ErrorCode, Stdio};
use parking_lot::Mutex;
use synapse_shared::paths::Paths;
use synapse_shared::proto::GetSessionRequest;
use synapse_shared::proto::sessions_client::SessionsClient;
use tokio::sync::{OnceCell, mpsc};
use tonic::transport::Channel;

use link::{Link, OpenRequest};
use session::Command;

/// Requests queued for one session's task.
const SESSION_QUEUE: usize = 16;

/// The agent's state shared by the connection's handlers.
struct AcpAgent {
    paths: Paths,
    daemon: OnceCell<Result<Channel, String>>,
    sessions: Mutex<HashMap<String, Entry>>,
    /// The editor offered `fs` (read and write) in `initialize`.
    editor_files: AtomicBool,
}

/// A session this connection opened: its task's queue and its folder.
#[derive(Clone)]
struct Entry {
    commands: mpsc::Sender<Command>,
    cwd: String,
}

impl AcpAgent {
    /// The daemon, reached (and started when nothing answers) once.
    async fn daemon(&self) -> Result<Channel, Error> {
        self.daemon
            .get_or_init(|| async {
                crate::connect::connect(&self.paths)
                    .await
                    .map_err(|e| format!("{e:#}"))
            })
            .await
            .clone()
            .map_err(|e| {
                Error::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "cannot reach the Synapse daemon: {e} (check `synapse daemon status` and \
                         `synapse doctor`)"
                    ),
                )
            })
    }

    fn session(&self, id: &acp::SessionId) -> Result<Entry, Error> {
        self.sessions.lock().get(&*id.0).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                format!(
                    "unknown session {}: open it first with session/new or session/load",
                    id.0
                ),
            )
        })
    }
}

/// Runs the agent on stdin/stdout until the editor closes them.
pub async fn serve(paths: Paths) -> anyhow::Result<()> {
    let agent = Arc::new(AcpAgent {
        paths,
        daemon: OnceCell::new(),
        sessions: Mutex::default(),
        editor_files: AtomicBool::new(false),
    });
    // Reach the daemon while the editor initializes: its first session/new need not wait.
    let warm = agent.clone();
    tokio::spawn(async move {
        let _ = warm.daemon().await;
    });
    let (a0, a1, a2, a3, a4, a5, a6) = (
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
        agent.clone(),
    );
    Agent
        .v1()
        .name("synapse")
        .on_receive_request(
            async move |request: acp::InitializeRequest, responder, _cx| {
                let fs = &request.client_capabilities.fs;
                a0.editor_files
                    .store(fs.read_text_file && fs.write_text_file, Ordering::SeqCst);
                responder.respond(initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest, responder, cx| {
                let agent = a1.clone();
                let conn = cx.clone();
                // A failed request is answered with its error; the task (and the connection)
                // never fails because of one request.
                cx.spawn(async move {
                    let open = folder(&request.cwd).and_then(|cwd| {
                        Ok(OpenRequest {
                            cwd,
                            resume_id: None,
                            mcp_servers: mcp_servers(&request.mcp_servers)?,
                            editor_files: agent.editor_files.load(Ordering::SeqCst),
                        })
                    });
                    match open {
                        Ok(open) => open_session(agent, open, responder, conn, false).await,
                        Err(e) => drop(responder.respond_with_error(e)),
                    }
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest, responder, cx| {
                let agent = a2.clone();
                let conn = cx.clone();
                cx.spawn(async move {
                    let open = folder(&request.cwd).and_then(|cwd| {
                        Ok(OpenRequest {
                            cwd,
                            resume_id: Some(request.session_id.0.to_string()),
                            mcp_servers: mcp_servers(&request.mcp_servers)?,
                            editor_files: agent.editor_files.load(Ordering::SeqCst),
                        })
                    });
                    match open {
                        Ok(open) => open_session(agent, open, responder, conn, true).await,
                        Err(e) => drop(responder.respond_with_error(e)),
                    }
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest, responder, cx| {
                let agent = a3.clone();
                cx.spawn(async move {
                    match prompt_input(&agent, &request).await {
                        Ok((session, input)) => {
                            let _ = session
                                .commands
                                .send(Command::Prompt(input, responder))
                                .await;
                        }
                        Err(e) => drop(responder.respond_with_error(e)),
                    }
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionModeRequest, responder, cx| {
                let agent = a4.clone();
                cx.spawn(async move {
                    let target = synapse_session::Mode::parse(&request.mode_id.0)
                        .map_err(|e| Error::new(ErrorCode::INVALID_PARAMS, e.to_string()))
                        .and_then(|mode| Ok((mode, agent.session(&request.session_id)?)));
                    match target {
                        Ok((mode, session)) => {
                            let _ = session
                                .commands
                                .send(Command::SetMode(mode, responder))
                                .await;
                        }
                        Err(e) => drop(responder.respond_with_error(e)),
                    }
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: acp::CancelNotification, _cx| {
                if let Ok(session) = a5.session(&cancel.session_id) {
                    let _ = session.commands.send(Command::Cancel).await;
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| anyhow::anyhow!("the ACP connection failed: {e}"))?;
    drop(a6);
    Ok(())
}

/// `initialize`'s answer: the protocol version both speak, what prompts may hold, that
/// sessions load, and who this agent is.
pub fn initialize(request: &acp::InitializeRequest) -> acp::InitializeResponse {
    let version = std::cmp::min(
        request.protocol_version,
        agent_client_protocol::schema::ProtocolVersion::LATEST,
    );
    acp::InitializeResponse::new(version)
        .agent_capabilities(
            acp::AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(
                    acp::PromptCapabilities::new()
                        .image(true)
                        .audio(false)
                        .embedded_context(true),
                )
                .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(true)),
        )
        .agent_info(acp::Implementation::new("synapse", env!("CARGO_PKG_VERSION")).title("Synapse"))
}

/// The editor's folder, which must be an absolute path to a folder.
fn folder(cwd: &Path) -> Result<String, Error> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "cwd {} is not an absolute path to an existing folder",
                cwd.display()
            ),
        ));
    }
    Ok(cwd.display().to_string())
}

fn mcp_servers(
    servers: &[acp::McpServer],
) -> Result<Vec<synapse_shared::proto::SessionMcpServer>, Error> {
    servers
        .iter()
        .map(|s| {
            map::mcp_server(s)
                .map_err(|e| Error::new(ErrorCode::INVALID_PARAMS, format!("mcpServers: {e}")))
        })
        .collect()
}

/// Opens (or, for `session/load`, resumes and replays) a session, answers the editor, starts
/// the session's task and offers its slash commands. A failure is the request's answer.
async fn open_session<R: SessionOpenResponse>(
    agent: Arc<AcpAgent>,
    open: OpenRequest,
    responder: Responder<R>,
    cx: ConnectionTo<Client>,
    load: bool,
) {
    let cwd = open.cwd.clone();
    let (channel, link) = match open_link(&agent, open).await {
        Ok(opened) => opened,
        Err(e) => {
            let _ = responder.respond_with_error(e);
            return;
        }
    };
    let session_id = link.session.id().to_string();
    let id = acp::SessionId::new(session_id.clone());
    if load {
        let history = SessionsClient::new(channel.clone())
            .get(GetSessionRequest {
                id: session_id.clone(),
            })
            .await
            .map(|r| r.into_inner().messages_json)
            .unwrap_or_default();
        for update in history::replay(&history) {
            let _ = cx.send_notification(acp::SessionNotification::new(id.clone(), update));
        }
    }
    let modes = map::modes(link.mode);
    let (tx, rx) = mpsc::channel(SESSION_QUEUE);
    agent.sessions.lock().insert(
        session_id,
        Entry {
            commands: tx,
            cwd: cwd.clone(),
        },
    );
    if responder.respond(R::new(id.clone(), modes)).is_err() {
        return;
    }
    let commands = commands::available(&channel, &cwd).await;
    let _ = cx.send_notification(acp::SessionNotification::new(
        id.clone(),
        acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands)),
    ));
    tokio::spawn(session::run(link, id, cx, rx));
}

async fn open_link(agent: &AcpAgent, open: OpenRequest) -> Result<(Channel, Link), Error> {
    let channel = agent.daemon().await?;
    let resume = open.resume_id.clone();
    let link = Link::open(channel.clone(), open)
        .await
        .map_err(|e| open_error(&e, resume.as_deref()))?;
    Ok((channel, link))
}

/// The daemon's refusal to open a session, as an ACP error.
fn open_error(e: &anyhow::Error, resume: Option<&str>) -> Error {
    match resume {
        Some(id) => Error::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("cannot load session {id}: {e:#} (`synapse sessions list` shows the sessions)"),
        ),
        None => Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("cannot open a session: {e:#}"),
        ),
    }
}

/// `session/new`'s and `session/load`'s answers, which both carry the modes.
trait SessionOpenResponse: agent_client_protocol::JsonRpcResponse + Send + 'static {
    fn new(id: acp::SessionId, modes: acp::SessionModeState) -> Self;
}

impl SessionOpenResponse for acp::NewSessionResponse {
    fn new(id: acp::SessionId, modes: acp::SessionModeState) -> Self {
        acp::NewSessionResponse::new(id).modes(modes)
    }
}

impl SessionOpenResponse for acp::LoadSessionResponse {
    fn new(_id: acp::SessionId, modes: acp::SessionModeState) -> Self {
        acp::LoadSessionResponse::new().modes(modes)
    }
}

/// `session/prompt`: the session it names and the editor's blocks as a user message (a skill's
/// `/<name>` expanded).
async fn prompt_input(
    agent: &AcpAgent,
    request: &acp::PromptRequest,
) -> Result<(Entry, synapse_session::Input), Error> {
    let session = agent.session(&request.session_id)?;
    let mut input = map::input(&request.prompt)
        .map_err(|e| Error::new(ErrorCode::INVALID_PARAMS, format!("prompt: {e}")))?;
    if let Some(synapse_session::InputBlock::Text(first)) = input.blocks.first_mut()
        && first.trim_start().starts_with('/')
    {
        let channel = agent.daemon().await?;
        if let Some(expanded) = commands::expand_skill(&channel, &session.cwd, first)
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e))?
        {
            *first = expanded;
        }
    }
    Ok((session, input))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_offers_images_and_embedded_context_and_session_loading() {
        let got = initialize(&acp::InitializeRequest::new(
            agent_client_protocol::schema::ProtocolVersion::V1,
        ));
        let json = serde_json::to_value(&got).unwrap();
        assert_eq!(json["protocolVersion"], 1);
        let caps = &json["agentCapabilities"];
        assert_eq!(caps["loadSession"], true);
        assert_eq!(caps["promptCapabilities"]["image"], true);
        assert_eq!(caps["promptCapabilities"]["audio"], false);
        assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
        assert_eq!(json["agentInfo"]["name"], "synapse");
    }
}
