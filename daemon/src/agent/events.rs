//! What a running turn reports, in the daemon's own terms; the Chat service maps these to the
//! wire events, silent runs ignore them. [`TurnEnd`] says why a turn ended; a failed one
//! carries a [`TurnFailure`] (kind, message, HTTP status) that reaches the client as the result.

use std::time::Duration;

use synapse_llm::{ContentBlock, StopReason, Usage};

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
        /// The files the call changed (a `write`/`edit`), as diffs for the user.
        changes: Vec<synapse_command::file_change::FileChange>,
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
        /// The running call's id (empty when the runner has not named it).
        id: String,
        tail: String,
        total_bytes: u64,
    },
    /// One completed model answer, before its tool calls run.
    AssistantMessage {
        /// Unique within the daemon ([`message_id`]).
        id: String,
        model: String,
        content: Vec<ContentBlock>,
        /// The provider's stop reason in the Anthropic spelling (`end_turn`, `tool_use`, …).
        stop_reason: String,
        usage: Usage,
        /// How long the request took, retries included.
        duration: Duration,
    },
    /// The results of one answer's tool calls, as the model receives them.
    ToolResults(Vec<ContentBlock>),
}

/// A new message id (`msg_<daemon start>_<n>`), unique within the daemon's life.
pub fn message_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    static STARTED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let started = STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default()
    });
    format!("msg_{started:x}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A stop reason as the Anthropic Messages API spells it.
pub fn stop_reason_word(reason: Option<&StopReason>) -> String {
    match reason {
        Some(StopReason::EndTurn) | None => "end_turn".into(),
        Some(StopReason::ToolUse) => "tool_use".into(),
        Some(StopReason::MaxTokens) => "max_tokens".into(),
        Some(StopReason::StopSequence) => "stop_sequence".into(),
        Some(StopReason::Refusal) => "refusal".into(),
        Some(StopReason::Other(word)) => word.clone(),
    }
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
    /// The client's budget of model requests (`synapse run --max-turns`) was used up.
    MaxTurns(u32),
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
            TurnEnd::MaxTurns(_) => "max_turns",
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
            TurnEnd::MaxTurns(n) => {
                format!("Stopped after {n} model requests: the limit set by --max-turns.")
            }
        }
    }
}
