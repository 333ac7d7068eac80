//! The Anthropic Messages API provider: `wire` builds the request body, `transport` sends it
//! with retries, and `assembler` turns the SSE reply into [`LlmEvent`]s.
//!
//! [`LlmEvent`]: crate::LlmEvent

mod assembler;
mod wire;

use crate::LlmProvider;
use crate::config::{ProviderConfig, ProviderKind, secret_header};
use crate::error::LlmError;
use crate::event_stream::{EventStream, produce};
use crate::transport::{self, Transport};
use crate::types::LlmRequest;

use assembler::AnthropicAssembler;

/// The API version header every request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Talks to `{base_url}/v1/messages`.
#[derive(Debug)]
pub struct AnthropicProvider {
    transport: Transport,
    url: String,
    api_key: Option<reqwest::header::HeaderValue>,
    model: String,
}

impl AnthropicProvider {
    pub(crate) fn new(config: &ProviderConfig, client: reqwest::Client) -> Result<Self, LlmError> {
        let api_key = config
            .api_key
            .as_ref()
            .map(|k| secret_header(k, ProviderKind::Anthropic))
            .transpose()?;
        Ok(Self {
            transport: Transport {
                client,
                kind: ProviderKind::Anthropic,
                retry: config.retry,
            },
            url: format!("{}/v1/messages", config.base_url),
            api_key,
            model: config.model.clone(),
        })
    }
}

impl LlmProvider for AnthropicProvider {
    fn stream(&self, request: LlmRequest) -> Result<EventStream, LlmError> {
        let body = serde_json::to_string(&wire::request_body(&request)).map_err(|e| {
            LlmError::Request {
                provider: ProviderKind::Anthropic.display_name(),
                message: e.to_string(),
            }
        })?;
        let url = self.url.clone();
        let key = self.api_key.clone();
        let transport = self.transport.clone();
        let build = move |client: &reqwest::Client| {
            let mut req = client
                .post(&url)
                .header("anthropic-version", ANTHROPIC_VERSION)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .body(body.clone());
            if let Some(key) = &key {
                req = req.header("x-api-key", key.clone());
            }
            req
        };
        Ok(produce(move |out| {
            transport::run(transport, build, AnthropicAssembler::new, out)
        }))
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.model
    }
}
