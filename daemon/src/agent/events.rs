//! What a running turn reports, in the daemon's own terms; the Chat service maps these to the
//! wire events, silent runs ignore them.

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
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model answered without asking for more tool calls.
    Completed,
    Cancelled,
    /// The model call failed; the message says why.
    Error(String),
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
            TurnEnd::MaxIterations(_) => "max_iterations",
            TurnEnd::TooManyFailures(_) => "too_many_failures",
        }
    }

    /// A sentence for the user, empty for a normal end.
    pub fn message(&self) -> String {
        match self {
            TurnEnd::Completed => String::new(),
            TurnEnd::Cancelled => "Turn cancelled.".to_string(),
            TurnEnd::Error(e) => e.clone(),
            TurnEnd::MaxIterations(n) => {
                format!("Stopped after {n} model calls in one turn (the iteration limit).")
            }
            TurnEnd::TooManyFailures(n) => {
                format!("Stopped after {n} tool calls failed in a row.")
            }
        }
    }
}
