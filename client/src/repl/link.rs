//! The REPL's attachment to its session. [`Link`] wraps [`Attached`]: a pump task moves the
//! session's events into a channel the REPL selects on, and reports the stream's end as
//! [`Incoming::Lost`] so the REPL can reattach ([`Link::reattach`]) to the same session after
//! the daemon restarts.

use std::time::{Duration, Instant};

use anyhow::Context;
use synapse_shared::paths::Paths;
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::client_message::Kind as Out;
use synapse_shared::proto::{ClientMessage, SessionOpened};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use crate::attach::{Attached, OpenOptions};

/// How long a reattach keeps trying before it gives up (the daemon is restarting).
pub const REATTACH_TIMEOUT: Duration = Duration::from_secs(20);
const REATTACH_PAUSE: Duration = Duration::from_millis(100);
/// Events buffered between the pump and the REPL.
const EVENT_QUEUE: usize = 256;

/// What the pump delivers.
#[derive(Debug)]
pub enum Incoming {
    Event(Ev),
    /// The stream ended: the daemon stopped or the connection broke.
    Lost(String),
}

/// A live attachment.
pub struct Link {
    pub channel: Channel,
    pub opened: SessionOpened,
    outgoing: mpsc::Sender<ClientMessage>,
    events: mpsc::Receiver<Incoming>,
    /// Events read while a question was asked, delivered again by [`Link::next`] first.
    held: std::collections::VecDeque<Ev>,
    pump: JoinHandle<()>,
    up: bool,
}

impl Link {
    /// Connects (starting the daemon when nothing answers) and opens the session.
    pub async fn open(paths: &Paths, options: &OpenOptions) -> anyhow::Result<Self> {
        let channel = crate::connect::connect(paths).await?;
        let attached = Attached::open(channel.clone(), options).await?;
        Ok(Self::from_attached(channel, attached))
    }

    /// Reopens `session_id` after the stream was lost, retrying while the daemon restarts.
    pub async fn reattach(
        paths: &Paths,
        session_id: &str,
        model: Option<String>,
        permission_mode: Option<String>,
    ) -> anyhow::Result<Self> {
        let options = OpenOptions {
            model,
            permission_mode,
            resume_id: Some(session_id.to_string()),
            ..OpenOptions::default()
        };
        let deadline = Instant::now() + REATTACH_TIMEOUT;
        loop {
            match Self::open(paths, &options).await {
                Ok(link) => return Ok(link),
                Err(e) if Instant::now() >= deadline => {
                    return Err(e).context(format!("cannot reattach to session {session_id}"));
                }
                Err(_) => tokio::time::sleep(REATTACH_PAUSE).await,
            }
        }
    }

    fn from_attached(channel: Channel, attached: Attached) -> Self {
        let outgoing = attached.sender();
        let Attached {
            opened, mut events, ..
        } = attached;
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        let pump = tokio::spawn(async move {
            let reason = loop {
                match events.message().await {
                    Ok(Some(event)) => {
                        if let Some(kind) = event.kind
                            && tx.send(Incoming::Event(kind)).await.is_err()
                        {
                            return;
                        }
                    }
                    Ok(None) => break "the daemon closed the session stream".to_string(),
                    Err(status) => break status.message().to_string(),
                }
            };
            let _ = tx.send(Incoming::Lost(reason)).await;
        });
        Self {
            channel,
            opened,
            outgoing,
            events: rx,
            held: Default::default(),
            pump,
            up: true,
        }
    }

    pub fn session_id(&self) -> &str {
        &self.opened.session_id
    }

    /// False once the stream was lost.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The next event; after a loss this never resolves (so `select!` skips it).
    pub async fn next(&mut self) -> Incoming {
        if let Some(event) = self.held.pop_front() {
            return Incoming::Event(event);
        }
        if !self.up {
            return std::future::pending().await;
        }
        let incoming = self
            .events
            .recv()
            .await
            .unwrap_or_else(|| Incoming::Lost("the event pump stopped".into()));
        if matches!(incoming, Incoming::Lost(_)) {
            self.up = false;
        }
        incoming
    }

    /// Keeps `event` for the next [`Link::next`] (read while a question was open).
    pub fn hold(&mut self, event: Ev) {
        self.held.push_back(event);
    }

    /// Sends a message; an error means the connection is gone.
    pub async fn send(&mut self, kind: Out) -> anyhow::Result<()> {
        if !self.up {
            anyhow::bail!("not connected to the daemon");
        }
        let sent = self.outgoing.send(ClientMessage { kind: Some(kind) }).await;
        if sent.is_err() {
            self.up = false;
            anyhow::bail!("the connection to the daemon closed");
        }
        Ok(())
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.pump.abort();
    }
}
