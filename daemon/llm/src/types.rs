//! Provider-neutral conversation and stream types. The agent loop builds an [`LlmRequest`] from
//! [`Message`]s, a provider turns it into its wire format, and the reply comes back as a stream of
//! [`LlmEvent`]s. Messages are serde types so the session log stores exactly what was sent.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message. Tool results travel in user messages, as in the Anthropic API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    /// A tool call the assistant made; `input` is the parsed JSON object.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// The answer to a [`ContentBlock::ToolUse`] with the same id.
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// Images the tool returned (an MCP tool's screenshot), sent to the model with it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// An image for the model: its media type (`image/png`) and its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub media_type: String,
    pub data: String,
}

/// Context tokens one image is counted as (a screenshot-sized image costs about this much).
pub const IMAGE_TOKENS_ESTIMATE: usize = 1_600;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding plain text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// An assistant message holding plain text.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// A user message carrying tool results.
    pub fn tool_results(results: impl IntoIterator<Item = ToolResult>) -> Self {
        let content = results
            .into_iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.tool_use_id,
                content: r.content,
                is_error: r.is_error,
                images: r.images,
            })
            .collect();
        Self {
            role: Role::User,
            content,
        }
    }

    /// The tool calls in this message, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    /// All text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The outcome of one tool call, ready to be sent back.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub content: String,
    pub is_error: bool,
    /// Images that go with the result (see [`ContentBlock::ToolResult`]).
    pub images: Vec<Image>,
}

/// A tool the model may call (Synapse sends exactly one: see [`crate::bash_tool`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: Value,
}

/// Everything a provider needs for one model call.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub max_tokens: u32,
}

/// Token counts for one model call. `input` excludes cached tokens (Anthropic's meaning); the
/// OpenAI provider converts to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, u: Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_creation += u.cache_creation;
    }
}

impl Usage {
    /// Every input token the model saw: what counts against the context window.
    pub fn total_input(&self) -> u64 {
        self.input + self.cache_read + self.cache_creation
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The reply hit `max_tokens`.
    MaxTokens,
    StopSequence,
    /// The provider refused or filtered the reply.
    Refusal,
    /// A reason this version does not know, as the provider spelled it.
    Other(String),
}

/// What a provider stream yields, in order: any number of `Retrying` (only before output), then
/// text and tool-call events, then one `Usage` and one `Done`. Every `ToolCallDone` arrives before
/// `Done`; a stream that ends in an error after some events means the turn failed, so the caller
/// must run tool calls only once `Done` has arrived.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmEvent {
    TextDelta(String),
    /// A tool call began streaming; its input follows in `ToolCallDone`.
    ToolCallStart {
        id: String,
        name: String,
    },
    /// A tool call is complete with its parsed input.
    ToolCallDone {
        id: String,
        name: String,
        input: Value,
    },
    Usage(Usage),
    /// The call failed before any output and will be tried again after `delay`.
    Retrying {
        /// The attempt about to be made (2 for the first retry).
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    Done {
        stop_reason: StopReason,
    },
}
