//! What can go wrong talking to a model, worded for the user. The transport decides which of
//! these are retried; by the time one reaches the caller the turn has failed.

use std::time::Duration;

/// A failed model call. Messages never contain an API key.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum LlmError {
    /// 401/403: the key is missing, wrong or lacks permission.
    #[error(
        "{provider} rejected the API key ({status} {kind}: {message}). Set {variable} in the \
         environment or \"env\": {{\"{variable}\": \"...\"}} in $SYNAPSE_HOME/settings.json"
    )]
    Auth {
        provider: &'static str,
        status: u16,
        kind: String,
        message: String,
        variable: &'static str,
    },

    /// The API answered with an error that trying again will not fix (400, 404, 413, ...).
    #[error("{provider} API error {status} {kind}: {message}")]
    Api {
        provider: &'static str,
        status: u16,
        kind: String,
        message: String,
    },

    /// Every try failed with a retryable error.
    #[error("{provider} failed after {attempts} tries; last error: {last}")]
    RetriesExhausted {
        provider: &'static str,
        attempts: u32,
        last: String,
    },

    /// The server asked us to wait longer than we are willing to.
    #[error("{provider} is rate limiting this key; it asks to wait {} s before trying again", .wait.as_secs())]
    RateLimited {
        provider: &'static str,
        wait: Duration,
    },

    /// The response broke after output had been streamed; never retried so no tool call runs twice.
    #[error(
        "the {provider} response broke off after output had started ({reason}); this turn stops here \
         and nothing was retried"
    )]
    StreamBroken {
        provider: &'static str,
        reason: String,
    },

    /// The stream carried something that does not follow the API's format.
    #[error("unexpected data from {provider}: {message}")]
    Protocol {
        provider: &'static str,
        message: String,
    },

    /// The request could not be built (bad base URL, unserializable input, ...).
    #[error("cannot send the request to {provider}: {message}")]
    Request {
        provider: &'static str,
        message: String,
    },
}
