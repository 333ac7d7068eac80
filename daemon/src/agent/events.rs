//! What a running turn reports, in the daemon's own terms; the Chat service maps these to the
//! wire events, silent runs ignore them. [`TurnEnd`] says why a turn ended; a failed one
//! carries a [`TurnFailure`] (kind, message, HTTP status) that reaches the client as the result.

use std::time::Duration;

use synapse_llm::Usage;

#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    TextDelta(String),
    ToolStarted {
        id: String,
        command: String,
    },
    ToolFinished {
        id: String,
        command: String,
        exit_code: i32,
        output: String,
    },
    Usage(Usage),
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// Something the user should see that is not the model's text (e.g. history repaired).
    Notice(String),
    /// The last lines the running tool call printed so far (a live tail for the user).
    ToolOutput {
        tail: String,
        total_bytes: u64,
    },
}

/// A failed model call as the user sees it: what kind of failure, the sentence, and the HTTP
/// status when the server answered with one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFailure {
    /// `auth`, `api`, `context_overflow`, `retries_exhausted`, `rate_limited`, `stream_broken`,
    /// `protocol`, `request`, `config`.
    pub kind: String,
    pub message: String,
    pub status: Option<u16>,
}

impl TurnFailure {
    pub fn from_llm(e: &synapse_llm::LlmError) -> Self {
        Self {
            kind: e.kind().to_string(),
            message: e.to_string(),
            status: e.status(),
        }
    }

    /// A failure that is not the server's (no provider could be configured, say).
    pub fn other(kind: &str, message: impl Into<String>) -> Self {
        Self {
            kind: kind.to_string(),
            message: message.into(),
            status: None,
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model answered without asking for more tool calls.
    Completed,
    Cancelled,
    /// The model call failed.
    Error(TurnFailure),
    /// The model's reply hit the output limit (`maxOutputTokens`) and was cut.
    Truncated(u32),
    MaxIterations(u32),
    TooManyFailures(u32),
}

impl TurnEnd {
    /// The wire name of the reason.
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnEnd::Completed => "completed",
            TurnEnd::Cancelled => "cancelled",
            TurnEnd::Error(_) => "error",
            TurnEnd::Truncated(_) => "truncated",
            TurnEnd::MaxIterations(_) => "max_iterations",
            TurnEnd::TooManyFailures(_) => "too_many_failures",
        }
    }

    /// A sentence for the user, empty for a normal end.
    pub fn message(&self) -> String {
        match self {
            TurnEnd::Completed => String::new(),
            TurnEnd::Cancelled => "Turn cancelled.".to_string(),
            TurnEnd::Error(e) => e.message.clone(),
            TurnEnd::Truncated(n) => format!(
                "The reply was cut at the output limit of {n} tokens; raise \
                 llm.models.<model>.maxOutputTokens in settings.json or ask for a shorter answer."
            ),
            TurnEnd::MaxIterations(n) => {
                format!("Stopped after {n} model calls in one turn (the iteration limit).")
            }
            TurnEnd::TooManyFailures(n) => {
                format!("Stopped after {n} tool calls failed in a row.")
            }
        }
    }
}
