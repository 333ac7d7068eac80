//! One ACP session's line to the daemon, on the client's one session driver
//! ([`crate::session::Session`]): opens the session for the editor's folder (new, or resuming a
//! Synapse session) with the editor's MCP servers (and its files when it offered them), and reads the mode the daemon reports right
//! after the open, so `session/new` and `session/load` can advertise it.

use std::path::PathBuf;
use std::time::Duration;

use synapse_session::{Event, Mode};
use synapse_shared::proto::SessionMcpServer;
use tonic::transport::Channel;

use crate::session::{Incoming, OpenOptions, Scripting, Session};

/// How long the mode report that follows `Opened` is waited for.
const MODE_REPORT_WAIT: Duration = Duration::from_secs(2);

/// What the editor asked for when it opened the session.
#[derive(Debug, Clone, Default)]
pub struct OpenRequest {
    /// The editor's workspace folder (absolute).
    pub cwd: String,
    /// The Synapse session to resume (`session/load`), else a new one.
    pub resume_id: Option<String>,
    /// The editor's MCP servers, for this session only.
    pub mcp_servers: Vec<SessionMcpServer>,
    /// The editor offered its files (`fs`): the session's file commands go through it.
    pub editor_files: bool,
}

/// An open session.
pub struct Link {
    /// The driver's session.
    pub session: Session,
    /// Its permission mode when it opened.
    pub mode: Mode,
    /// What arrived while the mode report was awaited, to be delivered first.
    pub early: Option<Incoming>,
}

impl Link {
    /// Opens the session; the editor's environment (this process's) goes to its shell as the
    /// REPL's does. The error is the daemon's refusal in its words.
    pub async fn open(channel: Channel, request: OpenRequest) -> anyhow::Result<Self> {
        let options = OpenOptions {
            cwd: Some(PathBuf::from(&request.cwd)),
            resume_id: request.resume_id,
            scripting: Scripting {
                mcp_servers: request.mcp_servers,
                ..Scripting::default()
            },
            editor_files: request.editor_files,
            ..OpenOptions::default()
        };
        let mut session = Session::open(channel, &options).await?;
        let mut mode = Mode::Auto;
        let mut early = None;
        if let Ok(incoming) = tokio::time::timeout(MODE_REPORT_WAIT, session.next()).await {
            match &incoming {
                Incoming::Event(Event::ModeChanged { mode: word, .. }) => {
                    mode = Mode::parse(word).unwrap_or(Mode::Auto);
                }
                _ => early = Some(incoming),
            }
        }
        Ok(Self {
            session,
            mode,
            early,
        })
    }
}
