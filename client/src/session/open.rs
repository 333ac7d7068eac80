//! Opening a session: the `Chat.Attach` stream, the open message (folder, environment, model,
//! resume, `synapse run`'s scripting flags) and the daemon's `Opened` answer; and reopening the
//! same session while the daemon restarts ([`Session::reopen`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use synapse_session::Event;
use synapse_shared::paths::Paths;
use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ClientMessage, OpenSession};
use synapse_shared::session_wire;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use super::Session;

/// How long [`Session::reopen`] keeps trying before it gives up (the daemon is restarting).
pub const REOPEN_TIMEOUT: Duration = Duration::from_secs(20);
const REOPEN_PAUSE: Duration = Duration::from_millis(100);
/// Messages buffered between a front end and the stream to the daemon.
const OUTGOING_QUEUE: usize = 64;

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
    /// The session's folder (None: the current directory). An editor front end passes its
    /// workspace's.
    pub cwd: Option<PathBuf>,
    /// `synapse run --detach`: the turn goes on in the daemon after this front end leaves; its
    /// questions wait for another to attach.
    pub detach: bool,
    /// An editor that offers its files (ACP `fs`): the session's `read`/`write`/`edit` inside
    /// its folder come to this front end as [`synapse_session::Event::FileRequest`]s.
    pub editor_files: bool,
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
    /// `--mcp-config`'s servers (or an editor's), for this session only.
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

impl OpenOptions {
    fn to_wire(&self) -> anyhow::Result<OpenSession> {
        let cwd = match &self.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let env: HashMap<String, String> = std::env::vars().collect();
        let s = &self.scripting;
        Ok(OpenSession {
            cwd: cwd.display().to_string(),
            env,
            model: self.model.clone().unwrap_or_default(),
            resume_id: self.resume_id.clone().unwrap_or_default(),
            resume_latest: self.resume_latest,
            permission_mode: self.permission_mode.clone().unwrap_or_default(),
            allow: self.allow.clone(),
            non_interactive: self.non_interactive,
            approve_all: self.approve_all,
            system_prompt: s.system_prompt.clone().unwrap_or_default(),
            append_system_prompt: s.append_system_prompt.clone().unwrap_or_default(),
            max_turns: s.max_turns.unwrap_or(0),
            allowed_tools: s.allowed_tools.clone(),
            disallowed_tools: s.disallowed_tools.clone(),
            cleared: self.cleared,
            add_dirs: s.add_dirs.clone(),
            mcp_servers: s.mcp_servers.clone(),
            strict_mcp_config: s.strict_mcp_config,
            session_id: s.session_id.clone().unwrap_or_default(),
            settings_json: s.settings_json.clone(),
            fallback_models: s.fallback_models.clone(),
            bypass_permissions: s.bypass_permissions,
            detach: self.detach,
            editor_files: self.editor_files,
        })
    }
}

impl Session {
    /// Opens (or resumes) a session over `channel` and waits for the daemon's `Opened`.
    pub async fn open(channel: Channel, options: &OpenOptions) -> anyhow::Result<Session> {
        let (outgoing, rx) = mpsc::channel(OUTGOING_QUEUE);
        outgoing
            .send(ClientMessage {
                kind: Some(Out::Open(options.to_wire()?)),
            })
            .await?;
        let mut events = ChatClient::new(channel.clone())
            .attach(ReceiverStream::new(rx))
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        let first = events.message().await?;
        let opened = match first.map(session_wire::event_from_wire) {
            Some(Ok(Event::Opened(opened))) => opened,
            Some(Ok(other)) => bail!("the daemon did not open a session (it sent {other:?} first)"),
            Some(Err(e)) => bail!("the daemon did not open a session: {e}"),
            None => bail!("the daemon closed the stream before it opened a session"),
        };
        Ok(Session::from_parts(channel, opened, outgoing, events))
    }

    /// Connects (starting the daemon when nothing answers) and opens the session.
    pub async fn connect(paths: &Paths, options: &OpenOptions) -> anyhow::Result<Session> {
        let channel = crate::connect::connect(paths).await?;
        Session::open(channel, options).await
    }

    /// Opens `session_id` again after its stream was lost, retrying for [`REOPEN_TIMEOUT`]
    /// while the daemon restarts.
    pub async fn reopen(
        paths: &Paths,
        session_id: &str,
        model: Option<String>,
        permission_mode: Option<String>,
    ) -> anyhow::Result<Session> {
        let options = OpenOptions {
            model,
            permission_mode,
            resume_id: Some(session_id.to_string()),
            ..OpenOptions::default()
        };
        let deadline = Instant::now() + REOPEN_TIMEOUT;
        loop {
            match Session::connect(paths, &options).await {
                Ok(session) => return Ok(session),
                Err(e) if Instant::now() >= deadline => {
                    return Err(e).context(format!("cannot reattach to session {session_id}"));
                }
                Err(_) => tokio::time::sleep(REOPEN_PAUSE).await,
            }
        }
    }
}
