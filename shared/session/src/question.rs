//! What a session asks the people at its front ends, and their answers. A question goes to
//! every attached front end; the first answer wins.

/// A question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// May this tool call run?
    Approval(ApprovalQuestion),
    /// An MCP server asks for a form to be filled in (or a page to be opened).
    Form(FormQuestion),
}

impl Question {
    /// The question's id, which its answer names.
    pub fn id(&self) -> &str {
        match self {
            Question::Approval(q) => &q.id,
            Question::Form(q) => &q.id,
        }
    }
}

/// The gate asks whether a call may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalQuestion {
    /// The question's id.
    pub id: String,
    /// The tool call it is about (`""`: not a model's call, e.g. a hook's).
    pub call_id: String,
    /// One line: what is asked (``Run `rm -rf build`?``).
    pub title: String,
    /// Why it asks, and what the call would do.
    pub detail: String,
    /// The answers offered, in order.
    pub options: Vec<AnswerOption>,
    /// The rule an "always" answer saves (`git push:*`), empty when none.
    pub pattern: String,
    /// The file that rule goes to.
    pub rules_file: String,
}

impl ApprovalQuestion {
    /// The answers to offer: the question's own, or — from a daemon that sends none — every
    /// decision with a plain label.
    pub fn offered(&self) -> Vec<AnswerOption> {
        if !self.options.is_empty() {
            return self.options.clone();
        }
        [
            (Decision::Yes, "Yes"),
            (Decision::Session, "Yes, for the rest of this session"),
            (Decision::Always, "Always (save the rule)"),
            (Decision::No, "No"),
        ]
        .into_iter()
        .map(|(decision, label)| AnswerOption {
            decision,
            label: label.to_string(),
        })
        .collect()
    }
}

/// One answer offered to an approval question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerOption {
    /// What choosing it decides.
    pub decision: Decision,
    /// How a front end labels it (`Yes, and don't ask again for git push in this project`).
    pub label: String,
}

/// An answer to an approval question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Run it, this once.
    Yes,
    /// Run it, and the same again in this session without asking.
    Session,
    /// Run it, and save the rule so it is never asked again.
    Always,
    /// Do not run it.
    No,
}

/// The kind of an answer option, as the Agent Client Protocol groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// Allow this time.
    AllowOnce,
    /// Allow from now on.
    AllowAlways,
    /// Refuse this time.
    RejectOnce,
}

impl Decision {
    const WORDS: &'static [&'static str] = &["yes", "session", "always", "no"];

    /// The decision's word on the wire (`yes`, `session`, `always`, `no`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Yes => "yes",
            Decision::Session => "session",
            Decision::Always => "always",
            Decision::No => "no",
        }
    }

    /// A decision from its word.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        [
            Decision::Yes,
            Decision::Session,
            Decision::Always,
            Decision::No,
        ]
        .into_iter()
        .find(|d| d.as_str() == word)
        .ok_or_else(|| crate::UnknownWord {
            what: "approval decision",
            word: word.to_string(),
            known: Self::WORDS,
        })
    }

    /// How the Agent Client Protocol groups it.
    pub fn kind(self) -> OptionKind {
        match self {
            Decision::Yes => OptionKind::AllowOnce,
            Decision::Session | Decision::Always => OptionKind::AllowAlways,
            Decision::No => OptionKind::RejectOnce,
        }
    }

    /// True when the call runs.
    pub fn allows(self) -> bool {
        !matches!(self, Decision::No)
    }
}

/// An MCP server's form (`elicitation/create`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormQuestion {
    /// The question's id.
    pub id: String,
    /// The MCP server asking.
    pub server: String,
    /// What the server says the input is for.
    pub message: String,
    /// The requested schema as JSON (an object of primitive properties).
    pub schema_json: String,
    /// URL mode: the page to open (the schema then has no fields); empty for a form.
    pub url: String,
}

/// What the person did with a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormAction {
    /// Filled in and sent.
    Accept,
    /// Refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

impl FormAction {
    const WORDS: &'static [&'static str] = &["accept", "decline", "cancel"];

    /// The action's word (`accept`, `decline`, `cancel`).
    pub fn as_str(self) -> &'static str {
        match self {
            FormAction::Accept => "accept",
            FormAction::Decline => "decline",
            FormAction::Cancel => "cancel",
        }
    }

    /// An action from its word.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        [FormAction::Accept, FormAction::Decline, FormAction::Cancel]
            .into_iter()
            .find(|a| a.as_str() == word)
            .ok_or_else(|| crate::UnknownWord {
                what: "form action",
                word: word.to_string(),
                known: Self::WORDS,
            })
    }
}

/// An answer from a front end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// To an approval question.
    Approval {
        /// The question's id.
        id: String,
        /// What was decided.
        decision: Decision,
    },
    /// To a form.
    Form {
        /// The question's id.
        id: String,
        /// What the person did.
        action: FormAction,
        /// For [`FormAction::Accept`]: a JSON object, one member per answered field.
        content_json: String,
    },
}

/// A question is no longer open, so every front end showing it takes its prompt down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionClosed {
    /// The question's id.
    pub id: String,
    /// The answer that decided it: a [`Decision`]'s or a [`FormAction`]'s word.
    pub answer: String,
    /// Why it closed.
    pub why: ClosedWhy,
}

/// Why a question closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedWhy {
    /// A front end answered it (the first answer wins; later ones are refused).
    Answered,
    /// Nobody answered within the question timeout (`questions.timeoutSecs`).
    TimedOut,
    /// Its turn ended, or the last front end left an attached turn.
    Withdrawn,
}

impl ClosedWhy {
    const WORDS: &'static [&'static str] = &["answered", "timed_out", "withdrawn"];

    /// The word on the wire (`answered`, `timed_out`, `withdrawn`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClosedWhy::Answered => "answered",
            ClosedWhy::TimedOut => "timed_out",
            ClosedWhy::Withdrawn => "withdrawn",
        }
    }

    /// A reason from its word.
    pub fn parse(word: &str) -> Result<Self, crate::UnknownWord> {
        [
            ClosedWhy::Answered,
            ClosedWhy::TimedOut,
            ClosedWhy::Withdrawn,
        ]
        .into_iter()
        .find(|w| w.as_str() == word)
        .ok_or_else(|| crate::UnknownWord {
            what: "reason a question closed",
            word: word.to_string(),
            known: Self::WORDS,
        })
    }
}
