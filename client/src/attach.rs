//! Attaching to a chat session in the daemon: opens the `Chat.Attach` stream, sends the open
//! message (cwd, environment, model, resume) and waits for `SessionOpened`. Used by `synapse run`
//! and the REPL.

use std::collections::HashMap;

use anyhow::{Context, bail};
use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ChatEvent, ClientMessage, OpenSession, SessionOpened, UserInput};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::transport::Channel;

/// An attached session: send with [`Attached::send`], read events from `events`.
pub struct Attached {
    pub opened: SessionOpened,
    pub events: Streaming<ChatEvent>,
    outgoing: mpsc::Sender<ClientMessage>,
}

/// How to open the session.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub model: Option<String>,
    pub resume_id: Option<String>,
    pub resume_latest: bool,
    /// `--permission-mode` (None: keep the session's, else settings, else auto).
    pub permission_mode: Option<String>,
    /// `--allow PATTERN`s for this session.
    pub allow: Vec<String>,
    /// Nobody answers approvals (`synapse run`).
    pub non_interactive: bool,
    /// `--yes`: every approval request is granted.
    pub approve_all: bool,
    /// `synapse run`'s scripting flags (`claude -p`'s).
    pub scripting: Scripting,
    /// Opened by `/clear` (SessionStart hooks are told so).
    pub cleared: bool,
    /// `synapse run --detach`: the turn goes on in the daemon after this client leaves.
    pub detach: bool,
}

/// `synapse run`'s `claude -p` flags, passed through to the session as they are.
#[derive(Debug, Clone, Default)]
pub struct Scripting {
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    pub max_turns: Option<u32>,
    /// Claude Code's rule syntax; the daemon reads them.
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// `--add-dir`, absolute.
    pub add_dirs: Vec<String>,
    /// `--mcp-config`'s servers, for this session only.
    pub mcp_servers: Vec<synapse_shared::proto::SessionMcpServer>,
    pub strict_mcp_config: bool,
    /// `--session-id` (a UUID, checked).
    pub session_id: Option<String>,
    /// `--settings` as a JSON object's text ("" = none).
    pub settings_json: String,
    pub fallback_models: Vec<String>,
    /// `--dangerously-skip-permissions`.
    pub bypass_permissions: bool,
}

impl Attached {
    pub async fn open(channel: Channel, options: &OpenOptions) -> anyhow::Result<Self> {
        let (outgoing, rx) = mpsc::channel(64);
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let env: HashMap<String, String> = std::env::vars().collect();
        outgoing
            .send(ClientMessage {
                kind: Some(Out::Open(OpenSession {
                    cwd: cwd.display().to_string(),
                    env,
                    model: options.model.clone().unwrap_or_default(),
                    resume_id: options.resume_id.clone().unwrap_or_default(),
                    resume_latest: options.resume_latest,
                    permission_mode: options.permission_mode.clone().unwrap_or_default(),
                    allow: options.allow.clone(),
                    non_interactive: options.non_interactive,
                    approve_all: options.approve_all,
                    system_prompt: options.scripting.system_prompt.clone().unwrap_or_default(),
                    append_system_prompt: options
                        .scripting
                        .append_system_prompt
                        .clone()
                        .unwrap_or_default(),
                    max_turns: options.scripting.max_turns.unwrap_or(0),
                    allowed_tools: options.scripting.allowed_tools.clone(),
                    disallowed_tools: options.scripting.disallowed_tools.clone(),
                    cleared: options.cleared,
                    add_dirs: options.scripting.add_dirs.clone(),
                    mcp_servers: options.scripting.mcp_servers.clone(),
                    strict_mcp_config: options.scripting.strict_mcp_config,
                    session_id: options.scripting.session_id.clone().unwrap_or_default(),
                    settings_json: options.scripting.settings_json.clone(),
                    fallback_models: options.scripting.fallback_models.clone(),
                    bypass_permissions: options.scripting.bypass_permissions,
                    detach: options.detach,
                })),
            })
            .await?;
        let mut events = ChatClient::new(channel)
            .attach(ReceiverStream::new(rx))
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        let opened = match events.message().await? {
            Some(ChatEvent {
                kind: Some(Ev::Opened(opened)),
            }) => opened,
            other => bail!("the daemon did not open a session (got {other:?})"),
        };
        Ok(Self {
            opened,
            events,
            outgoing,
        })
    }

    pub async fn send(&self, kind: Out) -> anyhow::Result<()> {
        self.outgoing
            .send(ClientMessage { kind: Some(kind) })
            .await
            .map_err(|_| anyhow::anyhow!("the connection to the daemon closed"))
    }

    pub async fn input(&self, text: String) -> anyhow::Result<()> {
        self.send(Out::Input(UserInput {
            text,
            ..Default::default()
        }))
        .await
    }

    /// A sender for cancel messages that can be moved into a signal handler.
    pub fn sender(&self) -> mpsc::Sender<ClientMessage> {
        self.outgoing.clone()
    }
}
