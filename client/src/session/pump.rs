//! The event pump: a task that reads the session's gRPC stream, turns each message into a
//! contract [`Event`] through `session_wire` (one the client cannot read becomes a
//! [`Event::Notice`] saying so) and ends with one [`Incoming::Closed`].

use futures::{Stream, StreamExt};
use synapse_session::Event;
use synapse_shared::proto::ChatEvent;
use synapse_shared::session_wire;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Events buffered between the pump and the front end.
const EVENT_QUEUE: usize = 256;

/// What the pump delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The session's next event.
    Event(Event),
    /// The stream ended: the daemon stopped or the connection broke. Always the last.
    Closed(Closed),
}

/// Why a session's stream is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// The daemon ended the stream.
    Ended,
    /// The stream broke.
    Broken {
        /// The gRPC status code.
        code: tonic::Code,
        /// Its message.
        message: String,
    },
}

impl Closed {
    /// Why, in a few words (`the daemon closed the session stream`, the status message).
    pub fn reason(&self) -> &str {
        match self {
            Closed::Ended => "the daemon closed the session stream",
            Closed::Broken { message, .. } => message,
        }
    }

    /// Why, as a run that lost its turn says it: a vanished daemon is "the connection closed",
    /// anything else is the status message.
    pub fn cause(&self) -> &str {
        match self {
            Closed::Ended => "the connection closed",
            Closed::Broken { code, message } => match code {
                tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled => {
                    "the connection closed"
                }
                _ => message,
            },
        }
    }
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

/// The notice for an event this client cannot read (a newer daemon's, or a broken one).
pub fn unreadable_notice(error: &session_wire::WireError) -> String {
    format!(
        "skipped an event this client cannot read ({error}); `synapse --version` and \
         `synapse daemon status` show whether client and daemon are of one version"
    )
}

/// Starts the pump over `stream`.
pub(super) fn spawn<S>(mut stream: S) -> (mpsc::Receiver<Incoming>, JoinHandle<()>)
where
    S: Stream<Item = Result<ChatEvent, tonic::Status>> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel(EVENT_QUEUE);
    let pump = tokio::spawn(async move {
        let closed = loop {
            let event = match stream.next().await {
                Some(Ok(event)) => event,
                Some(Err(status)) => {
                    break Closed::Broken {
                        code: status.code(),
                        message: status.message().to_string(),
                    };
                }
                None => break Closed::Ended,
            };
            let event = session_wire::event_from_wire(event)
                .unwrap_or_else(|e| Event::Notice(unreadable_notice(&e)));
            if tx.send(Incoming::Event(event)).await.is_err() {
                return;
            }
        };
        let _ = tx.send(Incoming::Closed(closed)).await;
    });
    (rx, pump)
}
