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
    /// The person at the client; tool results are sent under this role too.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text, from the user or the model.
    Text {
        /// The text as written, possibly several paragraphs.
        text: String,
    },
    /// A tool call the assistant made; `input` is the parsed JSON object.
    ToolUse {
        /// The provider's id for this call; the matching [`ContentBlock::ToolResult`] repeats it.
        id: String,
        /// The tool the model called (always [`crate::BASH_TOOL_NAME`] for tools Synapse offers).
        name: String,
        /// The call's arguments as a JSON object (for Bash see [`crate::BashInput`]).
        input: Value,
    },
    /// The answer to a [`ContentBlock::ToolUse`] with the same id.
    ToolResult {
        /// The `id` of the [`ContentBlock::ToolUse`] this answers.
        tool_use_id: String,
        /// The tool's output as the model reads it (for Bash: the command's output and exit code).
        content: String,
        /// True when the call failed (bad input, refused, crashed); the model sees it flagged.
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
    /// MIME type of the image, such as `image/png` or `image/jpeg`.
    pub media_type: String,
    /// The image file's bytes, base64-encoded (standard alphabet, no `data:` prefix).
    pub data: String,
}

/// Context tokens one image is counted as (a screenshot-sized image costs about this much).
pub const IMAGE_TOKENS_ESTIMATE: usize = 1_600;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who sent it.
    pub role: Role,
    /// Its blocks in order: text, tool calls (assistant) or tool results (user).
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
    /// The `id` of the tool call this answers, from [`LlmEvent::ToolCallDone`].
    pub tool_use_id: String,
    /// The output the model will read.
    pub content: String,
    /// True when the call failed; the model sees the result flagged as an error.
    pub is_error: bool,
    /// Images that go with the result (see [`ContentBlock::ToolResult`]).
    pub images: Vec<Image>,
}

/// A tool the model may call (Synapse sends exactly one: see [`crate::bash_tool`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, written for the model: it decides when to call the tool from this.
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: Value,
}

/// Everything a provider needs for one model call.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    /// The model id the server knows (`claude-sonnet-4-6`, `gpt-4.1`, an Ollama tag).
    pub model: String,
    /// The system prompt, sent apart from the messages.
    pub system: String,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call (Synapse sends only [`crate::bash_tool`]).
    pub tools: Vec<ToolDefinition>,
    /// The most tokens the reply may contain; reaching it ends the reply with
    /// [`StopReason::MaxTokens`].
    pub max_tokens: u32,
}

/// Token counts for one model call. `input` excludes cached tokens (Anthropic's meaning); the
/// OpenAI provider converts to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens processed without the prompt cache.
    pub input: u64,
    /// Tokens the model generated.
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache by this call (Anthropic only; 0 for OpenAI).
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
    /// The reply ended at a stop sequence of the request (Synapse sets none, so this is rare).
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
    /// The next piece of the reply's text, to append to what came before.
    TextDelta(String),
    /// A tool call began streaming; its input follows in `ToolCallDone`.
    ToolCallStart {
        /// The call's id, repeated by its `ToolCallDone`.
        id: String,
        /// The tool being called.
        name: String,
    },
    /// A tool call is complete with its parsed input.
    ToolCallDone {
        /// The call's id; its [`ToolResult`] must carry it back.
        id: String,
        /// The tool being called.
        name: String,
        /// The call's arguments as a JSON object; input that is not valid JSON (cut off by
        /// `max_tokens`) arrives as a JSON string holding the raw text.
        input: Value,
    },
    /// The token counts of the whole call, sent once just before `Done`.
    Usage(Usage),
    /// The call failed before any output and will be tried again after `delay`.
    Retrying {
        /// The attempt about to be made (2 for the first retry).
        attempt: u32,
        /// The most attempts the retry policy allows, the first one included.
        max_attempts: u32,
        /// How long the provider waits before the next attempt (the server's `retry-after`, or
        /// the policy's backoff).
        delay: Duration,
        /// Why the last attempt failed, worded for the user (status and server message, or timeout).
        reason: String,
    },
    /// The reply is complete; the stream ends after this event.
    Done {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}
