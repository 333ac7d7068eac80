//! The OpenAI-compatible Chat Completions provider (OpenAI, Ollama, vLLM, llama.cpp server,
//! OpenRouter): `wire` builds the request body, `transport` sends it with retries, and
//! `assembler` turns the streamed chunks into [`LlmEvent`]s. A key is sent only when one is set,
//! since local servers need none.
//!
//! [`LlmEvent`]: crate::LlmEvent

mod assembler;
mod wire;

use crate::LlmProvider;
use crate::config::{DEFAULT_OPENAI_BASE_URL, ProviderConfig, ProviderKind, secret_header};
use crate::error::LlmError;
use crate::event_stream::{EventStream, produce};
use crate::transport::{self, Transport};
use crate::types::LlmRequest;

use assembler::OpenAiAssembler;
use wire::MaxTokensField;

/// Talks to `{base_url}/chat/completions`.
#[derive(Debug)]
pub struct OpenAiProvider {
    transport: Transport,
    url: String,
    authorization: Option<reqwest::header::HeaderValue>,
    max_field: MaxTokensField,
    model: String,
}

impl OpenAiProvider {
    pub(crate) fn new(config: &ProviderConfig, client: reqwest::Client) -> Result<Self, LlmError> {
        let authorization = config
            .api_key
            .as_ref()
            .map(|k| secret_header(k, ProviderKind::OpenAi))
            .transpose()?;
        let max_field = if config.base_url == DEFAULT_OPENAI_BASE_URL {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Ok(Self {
            transport: Transport {
                client,
                kind: ProviderKind::OpenAi,
                retry: config.retry,
            },
            url: format!("{}/chat/completions", config.base_url),
            authorization,
            max_field,
            model: config.model.clone(),
        })
    }
}

impl LlmProvider for OpenAiProvider {
    fn stream(&self, request: LlmRequest) -> Result<EventStream, LlmError> {
        let body =
            serde_json::to_string(&wire::request_body(&request, self.max_field)).map_err(|e| {
                LlmError::Request {
                    provider: ProviderKind::OpenAi.display_name(),
                    message: e.to_string(),
                }
            })?;
        let url = self.url.clone();
        let authorization = self.authorization.clone();
        let transport = self.transport.clone();
        let build = move |client: &reqwest::Client| {
            let mut req = client
                .post(&url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .body(body.clone());
            if let Some(value) = &authorization {
                req = req.header(reqwest::header::AUTHORIZATION, value.clone());
            }
            req
        };
        Ok(produce(move |out| {
            transport::run(transport, build, OpenAiAssembler::new, out)
        }))
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenAi
    }

    fn model(&self) -> &str {
        &self.model
    }
}
