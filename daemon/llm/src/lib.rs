//! Talking to the model. The agent loop builds an [`LlmRequest`] (system prompt, neutral
//! [`Message`]s, the one [`bash_tool`]) and calls [`LlmProvider::stream`]; the provider sends it
//! in its wire format ([`anthropic`] Messages API or [`openai`] Chat Completions), retrying
//! failures that happen before any output ([`retry`], `transport`), and yields [`LlmEvent`]s
//! until `Done`. [`ProviderConfig::resolve`] picks the provider from settings.json and the
//! environment; [`build_provider`] makes it. [`limits`] holds the timeouts and per-model limits
//! of settings.json, [`discover`] asks the server for its context window; [`http`] builds the one
//! HTTP client they share and bounds its idle connections.

#![deny(missing_docs)]

pub mod anthropic;
pub mod config;
pub mod discover;
pub mod error;
pub mod event_stream;
pub mod http;
pub mod limits;
pub mod openai;
pub mod reach;
pub mod retry;
pub mod tool;
mod transport;
pub mod turn;
pub mod types;

use std::sync::Arc;

pub use config::{ApiKey, ConfigError, ProviderConfig, ProviderKind};
pub use error::LlmError;
pub use event_stream::EventStream;
pub use limits::{LimitSource, LlmSettings, ModelLimits};
pub use retry::RetryPolicy;
pub use tool::{BASH_TOOL_NAME, BashInput, ToolInputError, bash_tool};
pub use turn::{AssistantTurn, TurnBuilder, collect_turn};
pub use types::{
    ContentBlock, IMAGE_TOKENS_ESTIMATE, Image, LlmEvent, LlmRequest, Message, Role, StopReason,
    ToolDefinition, ToolResult, Usage,
};

/// A model API. Object safe: the agent loop holds an `Arc<dyn LlmProvider>` and tests may
/// substitute their own.
pub trait LlmProvider: Send + Sync + std::fmt::Debug {
    /// Starts one model call. Nothing is sent until the returned stream is polled; dropping the
    /// stream cancels the call. An `Err` here means the request could not even be built; failures
    /// of the call arrive as the stream's last item.
    fn stream(&self, request: LlmRequest) -> Result<EventStream, LlmError>;

    /// The wire format this provider speaks.
    fn kind(&self) -> ProviderKind;

    /// The model configured for this provider (what `LlmRequest::model` should usually be).
    fn model(&self) -> &str;
}

/// Makes the provider a configuration describes. Every provider shares one HTTP client, so
/// sessions reuse its connections (and its TLS set-up): a new `synapse run` against the same
/// server starts on a warm connection instead of a new TCP (and TLS) handshake.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn LlmProvider>, LlmError> {
    let client = shared_client().map_err(|message| LlmError::Request {
        provider: config.kind.display_name(),
        message,
    })?;
    Ok(match config.kind {
        ProviderKind::Anthropic => Arc::new(anthropic::AnthropicProvider::new(config, client)?),
        ProviderKind::OpenAi => Arc::new(openai::OpenAiProvider::new(config, client)?),
    })
}

/// The HTTP client all providers share (built on first use; a clone is a handle to it), its idle
/// connections closed after [`http::POOL_IDLE_TIMEOUT`].
fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| http::model_client(http::PoolLimits::default()))
        .clone()
}
