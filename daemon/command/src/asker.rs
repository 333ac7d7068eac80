//! What an extension may ask of the session whose call it serves: an MCP server's
//! `elicitation/create` (a form for the user to fill in) and `sampling/createMessage` (a reply of
//! the session's model, once the user allowed it).
//!
//! The chat session implements [`SessionAsker`] for each turn; the call carries it
//! (the shell's `ToolCall::asker`) and the router passes it in the [`crate::command::CallContext`] of
//! an in-process extension call, with the progress sink. The MCP connection takes it from there
//! for the duration of the `tools/call` and routes the server's requests of that call to it. A call
//! without an asker (`synapse exec`, `synapse mcp call`, a wrapper run inside a pipeline, a
//! sub-agent) has nobody to ask: its server's forms are declined and its sampling refused.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// A form a server wants filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct FormRequest {
    /// The server asking.
    pub server: String,
    /// What the input is for.
    pub message: String,
    /// The requested schema (object of primitive properties, in the server's order).
    pub schema: Value,
    /// URL mode: the page the server wants the user to open (the schema has no fields then).
    pub url: Option<String>,
}

/// The user's answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// Filled in: one member per answered field.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// Dismissed without a choice (the user cancelled, or went away).
    Cancel,
}

/// One message of a sampling request, text only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleMessage {
    /// True for the user's side, false for the assistant's.
    pub from_user: bool,
    /// The message's text.
    pub text: String,
}

/// A server's request for a model reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRequest {
    /// The server asking.
    pub server: String,
    /// The system prompt it asks the model to use.
    pub system_prompt: Option<String>,
    /// The conversation to reply to, oldest first.
    pub messages: Vec<SampleMessage>,
    /// What the server asked for; the session bounds it by its model's output limit.
    pub max_tokens: u32,
}

/// The model's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleReply {
    /// The model that answered.
    pub model: String,
    /// Its reply.
    pub text: String,
    /// The reply was cut at the token limit.
    pub truncated: bool,
}

/// Why a sampling request got no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SampleRefusal {
    /// The user did not allow it.
    #[error("the user did not allow MCP server {server} to use the model ({how})")]
    NotApproved {
        /// The server asking.
        server: String,
        /// How the user (or the lack of one) answered.
        how: String,
    },
    #[error("the model call failed: {0}")]
    /// The model was asked and failed.
    ModelFailed(String),
}

/// The session side of a call's server requests.
pub trait SessionAsker: Send + Sync {
    /// The chat session this asker belongs to (calls of one session may share a server).
    fn session(&self) -> &str;

    /// Shows the form to the session's user and waits for the answer.
    fn elicit(&self, request: FormRequest) -> BoxFuture<'_, FormAnswer>;

    /// Shows the request to the user and, when allowed, has the session's model answer it.
    fn sample(&self, request: SampleRequest) -> BoxFuture<'_, Result<SampleReply, SampleRefusal>>;
}

/// A cloneable, printable handle to a [`SessionAsker`].
#[derive(Clone)]
pub struct AskerHandle(pub Arc<dyn SessionAsker>);

impl std::fmt::Debug for AskerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AskerHandle({})", self.0.session())
    }
}
