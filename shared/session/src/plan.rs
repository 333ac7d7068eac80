//! The agent's plan as a front end shows it: the session's todo list, sent whole each time it
//! changes (the Agent Client Protocol's `plan` update).

/// One entry of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    /// What is to be done.
    pub content: String,
    /// How far it is.
    pub status: PlanStatus,
    /// How much it matters.
    pub priority: PlanPriority,
}

/// How far a plan entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// How much a plan entry matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanPriority {
    /// First.
    High,
    /// The default.
    Medium,
    /// Last.
    Low,
}

impl PlanStatus {
    const WORDS: &'static [&'static str] = &["pending", "in_progress", "completed"];

    /// The status word (`pending`, `in_progress`, `completed`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }

    /// A status from its word.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        [Self::Pending, Self::InProgress, Self::Completed]
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| crate::UnknownWord {
                what: "plan status",
                word: word.to_string(),
                known: Self::WORDS,
            })
    }
}

impl PlanPriority {
    const WORDS: &'static [&'static str] = &["high", "medium", "low"];

    /// The priority word (`high`, `medium`, `low`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanPriority::High => "high",
            PlanPriority::Medium => "medium",
            PlanPriority::Low => "low",
        }
    }

    /// A priority from its word.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        [Self::High, Self::Medium, Self::Low]
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| crate::UnknownWord {
                what: "plan priority",
                word: word.to_string(),
                known: Self::WORDS,
            })
    }
}
