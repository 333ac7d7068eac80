//! One ACP session's line to the daemon: opens a `Chat.Attach` stream for the editor's folder
//! (new, or resuming a Synapse session), and from then on speaks only the session contract —
//! [`Event`]s in, [`FrontEndMessage`]s out — through `synapse_shared::session_wire`.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Context;
use synapse_session::{Event, FrontEndMessage, Mode, Opened};
use synapse_shared::proto::chat_client::ChatClient;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ChatEvent, ClientMessage, OpenSession, SessionMcpServer};
use synapse_shared::session_wire;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::transport::Channel;

/// How long the mode report that follows `SessionOpened` is waited for.
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
}

/// An open session.
pub struct Link {
    /// The session as the daemon opened it.
    pub opened: Opened,
    /// Its permission mode when it opened.
    pub mode: Mode,
    /// Events that arrived while the mode report was awaited, to be handled first.
    pub early: Vec<Event>,
    events: Streaming<ChatEvent>,
    outgoing: mpsc::Sender<ClientMessage>,
}

/// Why a session could not be opened, as the daemon said it.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The daemon refused the open (unknown session id, a folder it cannot use, …).
    #[error("{0}")]
    Refused(String),
    /// The stream broke or said something unreadable.
    #[error(transparent)]
    Broken(#[from] anyhow::Error),
}

impl Link {
    /// Opens the session; the editor's environment (this process's) goes to its shell as the
    /// REPL's does.
    pub async fn open(channel: Channel, request: OpenRequest) -> Result<Self, OpenError> {
        let (outgoing, rx) = mpsc::channel(64);
        let env: HashMap<String, String> = std::env::vars().collect();
        let open = OpenSession {
            cwd: request.cwd,
            env,
            resume_id: request.resume_id.unwrap_or_default(),
            mcp_servers: request.mcp_servers,
            ..Default::default()
        };
        outgoing
            .send(ClientMessage {
                kind: Some(Out::Open(open)),
            })
            .await
            .map_err(|_| anyhow::anyhow!("the connection to the daemon closed"))?;
        let mut events = ChatClient::new(channel)
            .attach(ReceiverStream::new(rx))
            .await
            .map_err(|s| OpenError::Refused(s.message().to_string()))?
            .into_inner();
        let opened = match next(&mut events).await? {
            Some(Event::Opened(opened)) => opened,
            other => {
                return Err(anyhow::anyhow!("the daemon did not open a session (got {other:?})").into());
            }
        };
        let mut link = Self {
            opened,
            mode: Mode::Auto,
            early: Vec::new(),
            events,
            outgoing,
        };
        // The daemon reports the mode right after the open; anything else is kept for later.
        if let Ok(Ok(Some(event))) =
            tokio::time::timeout(MODE_REPORT_WAIT, next(&mut link.events)).await
        {
            match &event {
                Event::ModeChanged { mode, .. } => {
                    link.mode = Mode::parse(mode).unwrap_or(Mode::Auto);
                }
                _ => link.early.push(event),
            }
        }
        Ok(link)
    }

    /// The next event (`None`: the daemon closed the stream).
    pub async fn next(&mut self) -> anyhow::Result<Option<Event>> {
        if !self.early.is_empty() {
            return Ok(Some(self.early.remove(0)));
        }
        next(&mut self.events).await
    }

    /// A sender for the session's messages (input, controls, answers).
    pub fn sender(&self) -> Sender {
        Sender(self.outgoing.clone())
    }
}

/// Sends contract messages to the session.
#[derive(Clone)]
pub struct Sender(mpsc::Sender<ClientMessage>);

impl Sender {
    /// Sends one message.
    pub async fn send(&self, message: FrontEndMessage) -> anyhow::Result<()> {
        self.0
            .send(session_wire::message_to_wire(message))
            .await
            .map_err(|_| anyhow::anyhow!("the connection to the daemon closed"))
    }
}

async fn next(events: &mut Streaming<ChatEvent>) -> anyhow::Result<Option<Event>> {
    loop {
        let Some(event) = events
            .message()
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))
            .context("the daemon's event stream broke")?
        else {
            return Ok(None);
        };
        match session_wire::event_from_wire(event) {
            Ok(event) => return Ok(Some(event)),
            // A newer daemon's event this version cannot show: skip it, keep the session.
            Err(_) => continue,
        }
    }
}
