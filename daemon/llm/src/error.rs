//! What can go wrong talking to a model, worded for the user. The transport decides which of
//! these are retried; by the time one reaches the caller the turn has failed.

use std::time::Duration;

/// A failed model call. Messages never contain an API key.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum LlmError {
    /// 401/403: the key is missing, wrong or lacks permission.
    #[error(
        "{provider} rejected the API key ({status} {kind}: {message}). Set {variable} in the \
         environment or \"env\": {{\"{variable}\": \"...\"}} in {}",
        crate::config::settings_file_shown()
    )]
    Auth {
        /// The provider's display name, as in every variant.
        provider: &'static str,
        /// The HTTP status: 401 or 403.
        status: u16,
        /// The error type from the body (`authentication_error`), or the status's reason phrase.
        kind: String,
        /// The server's explanation from the error body.
        message: String,
        /// The variable the user should fix ([`crate::ProviderKind::key_variable`]).
        variable: &'static str,
    },

    /// The API answered with an error that trying again will not fix (400, 404, 413, ...).
    #[error("{provider} API error {status} {kind}: {message}")]
    Api {
        /// The provider's display name.
        provider: &'static str,
        /// The HTTP status; 200 when the error came inside an already accepted stream.
        status: u16,
        /// The error type from the body (`invalid_request_error`), or the status's reason phrase.
        kind: String,
        /// The server's explanation from the error body.
        message: String,
    },

    /// Every try failed with a retryable error.
    #[error("{provider} failed after {attempts} tries; last error: {last}")]
    RetriesExhausted {
        /// The provider's display name.
        provider: &'static str,
        /// How many attempts were made, the first one included.
        attempts: u32,
        /// Why the last attempt failed, worded for the user.
        last: String,
    },

    /// The server asked us to wait longer than we are willing to.
    #[error("{provider} is rate limiting this key; it asks to wait {} s before trying again", .wait.as_secs())]
    RateLimited {
        /// The provider's display name.
        provider: &'static str,
        /// How long the server asked us to wait (its `retry-after` header), more than the policy allows.
        wait: Duration,
    },

    /// The response broke after output had been streamed; never retried so no tool call runs twice.
    #[error(
        "the {provider} response broke off after output had started ({reason}); this turn stops here \
         and nothing was retried"
    )]
    StreamBroken {
        /// The provider's display name.
        provider: &'static str,
        /// What broke it: a dropped connection, a timeout, or an error event from the server.
        reason: String,
    },

    /// The stream carried something that does not follow the API's format.
    #[error("unexpected data from {provider}: {message}")]
    Protocol {
        /// The provider's display name.
        provider: &'static str,
        /// What was wrong with the data.
        message: String,
    },

    /// The request could not be built (bad base URL, unserializable input, ...).
    #[error("cannot send the request to {provider}: {message}")]
    Request {
        /// The provider's display name.
        provider: &'static str,
        /// Why the request could not be built.
        message: String,
    },
}

/// Phrases the servers use when the prompt does not fit the window: Anthropic ("prompt is too
/// long"), OpenAI (`context_length_exceeded`, "maximum context length"), llama.cpp
/// (`exceed_context_size_error`, "exceeds the available context size"), vLLM and Ollama.
const CONTEXT_OVERFLOW_MARKERS: &[&str] = &[
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "exceed_context_size",
    "exceeds the available context size",
    "context window",
    "too many tokens",
    "input is too long",
    "context length",
];

impl LlmError {
    /// A short, stable name of the error class for clients (`is_error` results, logs).
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Auth { .. } => "auth",
            LlmError::Api { .. } if self.is_context_overflow() => "context_overflow",
            LlmError::Api { .. } => "api",
            LlmError::RetriesExhausted { .. } => "retries_exhausted",
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::StreamBroken { .. } => "stream_broken",
            LlmError::Protocol { .. } => "protocol",
            LlmError::Request { .. } => "request",
        }
    }

    /// The HTTP status the server answered with, when it answered with an error status.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Auth { status, .. } | LlmError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True when the server rejected the request because the prompt does not fit the model's
    /// context window; the agent answers by compacting and trying once more.
    pub fn is_context_overflow(&self) -> bool {
        let LlmError::Api {
            status,
            kind,
            message,
            ..
        } = self
        else {
            return false;
        };
        if !matches!(status, 400 | 413 | 422 | 500 | 200) {
            return false;
        }
        let text = format!("{kind} {message}").to_ascii_lowercase();
        CONTEXT_OVERFLOW_MARKERS.iter().any(|m| text.contains(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, kind: &str, message: &str) -> LlmError {
        LlmError::Api {
            provider: "test",
            status,
            kind: kind.into(),
            message: message.into(),
        }
    }

    #[test]
    fn each_providers_context_overflow_is_recognised() {
        let anthropic = api(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        );
        let openai = api(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 8192 tokens.",
        );
        let llama = api(
            400,
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it",
        );
        for e in [&anthropic, &openai, &llama] {
            assert!(e.is_context_overflow(), "{e}");
            assert_eq!(e.kind(), "context_overflow");
            assert_eq!(e.status(), Some(400));
        }
        let other = api(400, "invalid_request_error", "messages: field required");
        assert!(!other.is_context_overflow());
        assert_eq!(other.kind(), "api");
    }
}
