//! The one conversion between the session contract (`synapse-session`) and the gRPC messages of
//! the `Chat` stream: [`proto::ChatEvent`] ⇄ [`Event`], [`proto::ClientMessage`] ⇄
//! [`FrontEndMessage`]. The daemon turns what its sessions report into [`Event`]s and sends them
//! through here; every front end reads them back through here and never matches proto messages
//! itself. Both directions are total over the contract (property tests in `props.rs`); a message
//! from a peer that this version cannot read is a [`WireError`] naming what was wrong.

mod events;
mod inbound;
#[cfg(test)]
mod props;

use crate::proto;
use synapse_session::{Event, FrontEndMessage, UnknownWord};

/// A wire message that does not say anything this version understands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The message has no `kind` (an empty or a newer peer's message).
    #[error("a {0} without a kind (sent by a newer or a broken peer)")]
    NoKind(&'static str),
    /// A word that is not one of the contract's.
    #[error("{0}")]
    Word(#[from] UnknownWord),
    /// A `ClientMessage` that is not part of an open session's conversation (`OpenSession`).
    #[error("an OpenSession after the session was opened")]
    Open,
}

/// A session event for the `Chat` stream.
pub fn event_to_wire(event: Event) -> proto::ChatEvent {
    events::to_wire(event)
}

/// A session event from the `Chat` stream.
pub fn event_from_wire(event: proto::ChatEvent) -> Result<Event, WireError> {
    events::from_wire(event)
}

/// A front end's message for the `Chat` stream.
pub fn message_to_wire(message: FrontEndMessage) -> proto::ClientMessage {
    inbound::to_wire(message)
}

pub use inbound::{input_from_wire, input_to_wire};

/// A front end's message from the `Chat` stream (anything but the `OpenSession` that starts it).
pub fn message_from_wire(message: proto::ClientMessage) -> Result<FrontEndMessage, WireError> {
    inbound::from_wire(message)
}
