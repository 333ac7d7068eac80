//! `synapse-session`: the session contract — what a Synapse session *is*, in the vocabulary every
//! front end speaks (the REPL, `synapse run`, an editor over the Agent Client Protocol, another
//! agent over MCP). Types only: no runtime, no wire code. The daemon emits these [`Event`]s and
//! [`Question`]s and receives [`Input`], [`Control`]s and [`Answer`]s; the one conversion to and
//! from the gRPC messages lives in `synapse-shared` (`synapse_shared::session_wire`), so a front
//! end never matches proto messages itself.
//!
//! The words follow the Agent Client Protocol where it has one (tool kinds, plan entries, content
//! blocks, permission option kinds), so an ACP front end maps them one to one.
#![deny(missing_docs)]

mod control;
mod event;
mod file;
mod input;
mod plan;
mod question;
mod stop;
mod tool;

pub use control::{Control, Mode, UnknownMode};
pub use event::{
    AssistantMessage, Event, FileChange, InstructionFile, Opened, Retrying, ToolDone, ToolProgress,
    TurnEnded, Usage,
};
pub use file::{FileOp, FileReply, FileRequest};
pub use input::{Input, InputBlock};
pub use plan::{PlanEntry, PlanPriority, PlanStatus};
pub use question::{
    Answer, AnswerOption, ApprovalQuestion, ClosedWhy, Decision, FormAction, FormQuestion,
    OptionKind, Question, QuestionClosed,
};
pub use stop::StopReason;
pub use tool::{ToolCall, ToolKind};

/// The start of the [`Event::Notice`] a detaching front end (`synapse run --detach`) gets once
/// its turn has started: it may leave now, the turn goes on.
pub const DETACHED_NOTICE: &str = "The turn goes on in the daemon with no front end attached";

/// What a front end sends a session once it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontEndMessage {
    /// A user message: starts a turn (or waits for the running one).
    Input(Input),
    /// Cancel, change the model or mode, compact.
    Control(Control),
    /// An answer to one of the session's questions.
    Answer(Answer),
    /// The editor's answer to a [`Event::FileRequest`].
    FileReply(FileReply),
}

/// A word of the contract that is not one of the known ones (from a newer or a foreign peer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    /// What the word names (`"decision"`, `"form action"`, …).
    pub what: &'static str,
    /// The word as received.
    pub word: String,
    /// The words that are understood.
    pub known: &'static [&'static str],
}

impl std::fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown {} {:?} (expected one of: {})",
            self.what,
            self.word,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownWord {}
