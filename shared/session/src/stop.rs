//! Why a turn stopped.

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The model answered without asking for more tool calls.
    Completed,
    /// A front end cancelled it.
    Cancelled,
    /// A model request failed (the event says how).
    Error,
    /// The model's reply hit the output limit and was cut.
    Truncated,
    /// The per-turn limit of model requests was reached.
    MaxIterations,
    /// Too many tool calls failed in a row.
    TooManyFailures,
    /// The front end's budget of model requests (`--max-turns`) was used up.
    MaxTurns,
    /// A reason this version does not know (a newer daemon's), kept as its word.
    Other(String),
}

impl StopReason {
    /// The reason's word on the wire (`completed`, `cancelled`, `error`, `truncated`,
    /// `max_iterations`, `too_many_failures`, `max_turns`).
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Completed => "completed",
            StopReason::Cancelled => "cancelled",
            StopReason::Error => "error",
            StopReason::Truncated => "truncated",
            StopReason::MaxIterations => "max_iterations",
            StopReason::TooManyFailures => "too_many_failures",
            StopReason::MaxTurns => "max_turns",
            StopReason::Other(word) => word,
        }
    }

    /// A reason from its word; an unknown word is kept as [`StopReason::Other`].
    pub fn parse(word: &str) -> Self {
        match word {
            "completed" => StopReason::Completed,
            "cancelled" => StopReason::Cancelled,
            "error" => StopReason::Error,
            "truncated" => StopReason::Truncated,
            "max_iterations" => StopReason::MaxIterations,
            "too_many_failures" => StopReason::TooManyFailures,
            "max_turns" => StopReason::MaxTurns,
            other => StopReason::Other(other.to_string()),
        }
    }

    /// True when the turn ended because the model was done.
    pub fn is_success(&self) -> bool {
        matches!(self, StopReason::Completed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back() {
        for r in [
            StopReason::Completed,
            StopReason::Cancelled,
            StopReason::Error,
            StopReason::Truncated,
            StopReason::MaxIterations,
            StopReason::TooManyFailures,
            StopReason::MaxTurns,
            StopReason::Other("paused".into()),
        ] {
            assert_eq!(StopReason::parse(r.as_str()), r);
        }
    }
}
