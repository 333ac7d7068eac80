//! What a session reports to its front ends, in order, as it goes: one [`Event`] at a time.

use crate::{FileRequest, PlanEntry, Question, QuestionClosed, StopReason, ToolCall};

/// One event of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The session is open (first event of every attach).
    Opened(Opened),
    /// A piece of the model's answer text, as it streams.
    Text(String),
    /// A tool call starts.
    ToolCall(ToolCall),
    /// The latest output of a running call (a live tail, about twice a second).
    ToolProgress(ToolProgress),
    /// A tool call finished.
    ToolDone(ToolDone),
    /// The agent's plan changed (the whole plan).
    Plan(Vec<PlanEntry>),
    /// Tokens used so far and the context window.
    Usage(Usage),
    /// A model request failed and is retried.
    Retrying(Retrying),
    /// Something went wrong that does not end the session.
    Error(String),
    /// Something the person should see that is not the model's text.
    Notice(String),
    /// The session asks something.
    Question(Question),
    /// A question is no longer open (answered here or at another front end, timed out, or
    /// withdrawn): take its prompt down.
    QuestionClosed(QuestionClosed),
    /// The skill sub-agent's report after a turn.
    EnhanceReport(String),
    /// The session's model changed.
    ModelChanged(String),
    /// The session's permission mode (after a change, and once when it opens).
    ModeChanged {
        /// The mode's word (`auto`, `ask`, `read-only`, `yolo`).
        mode: String,
        /// What the mode allows, the sandbox state and where rules come from.
        summary: String,
    },
    /// One completed model answer (after its text, before its tool calls run).
    Assistant(AssistantMessage),
    /// The results of one answer's tool calls as the model receives them: a JSON array of
    /// Anthropic-format `tool_result` blocks.
    ToolResults(String),
    /// The turn ended.
    TurnEnded(TurnEnded),
    /// The session asks the editor for a file (only the front end that offered its files gets
    /// it); the answer is a [`crate::FrontEndMessage::FileReply`].
    FileRequest(FileRequest),
}

/// The session a front end attached to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Opened {
    /// The session's id (resume it with this).
    pub session_id: String,
    /// The model its turns use.
    pub model: String,
    /// Its folder.
    pub cwd: String,
    /// It existed before this attach.
    pub resumed: bool,
    /// Messages in the restored history.
    pub messages: u32,
    /// Problems met while restoring it.
    pub warnings: Vec<String>,
    /// Completed turns so far.
    pub turns: u32,
    /// A turn is running right now (attached mid-turn).
    pub turn_running: bool,
    /// Skills in the session's view that could not be loaded.
    pub broken_skills: u32,
    /// The instruction files the session was given, in order.
    pub instructions: Vec<InstructionFile>,
}

/// An instruction file (AGENTS.md, CLAUDE.md, …) the session was given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstructionFile {
    /// Absolute path.
    pub path: String,
    /// As the model was shown it (`docs/AGENTS.md`, `~/.claude/CLAUDE.md`).
    pub shown: String,
    /// The file's whole size.
    pub bytes: u64,
    /// Only a part of it was given.
    pub cut: bool,
}

/// The live tail of a running call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolProgress {
    /// The call's id.
    pub id: String,
    /// The last few lines printed so far (not yet stripped of terminal control sequences).
    pub tail: String,
    /// Bytes printed so far.
    pub total_bytes: u64,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolDone {
    /// The call's id.
    pub id: String,
    /// Its command line.
    pub command: String,
    /// Its exit status.
    pub exit_code: i32,
    /// The first lines of its output.
    pub output_preview: String,
    /// Lines in its output.
    pub output_lines: u32,
    /// The whole output as the model received it.
    pub output: String,
    /// The files it changed, as diffs (the model never sees these).
    pub changes: Vec<FileChange>,
}

/// One file a call changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileChange {
    /// The file.
    pub path: String,
    /// The unified diff's hunks (`@@ -a,b +c,d @@` headers, then ' ', '-', '+' lines).
    pub hunks: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// Tokens and the context window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Usage {
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's cache.
    pub cache_creation_tokens: u64,
    /// Tokens the conversation occupies in the model's window after the last request.
    pub context_tokens: u64,
    /// The model's window.
    pub context_window: u64,
    /// Where the window's size came from (settings, the server, the model's name, a default).
    pub context_source: String,
}

/// A retried model request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Retrying {
    /// This attempt's number.
    pub attempt: u32,
    /// How many attempts there will be at most.
    pub max_attempts: u32,
    /// The wait before it.
    pub delay_ms: u64,
    /// Why the last one failed.
    pub reason: String,
}

/// One completed model answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssistantMessage {
    /// Unique within the daemon.
    pub message_id: String,
    /// The model that answered.
    pub model: String,
    /// The answer's content blocks as a JSON array in the Anthropic Messages format.
    pub content_json: String,
    /// The provider's stop reason in the Anthropic spelling (`end_turn`, `tool_use`, …).
    pub stop_reason: String,
    /// Its tokens.
    pub usage: Usage,
    /// How long the request took, retries included.
    pub duration_ms: u64,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnded {
    /// Why.
    pub reason: StopReason,
    /// Why, for people (empty for a normal end).
    pub message: String,
    /// The turn's last assistant text.
    pub final_text: String,
    /// The turn's number in the session (1-based).
    pub turn: u32,
    /// Tokens its model requests used.
    pub usage: Usage,
    /// For [`StopReason::Error`]: the failure's class (`auth`, `api`, `rate_limited`, …).
    pub error_kind: String,
    /// The server's HTTP status for a failed request (0: none).
    pub http_status: u32,
    /// Background jobs of the session still running as the turn ends.
    pub background_jobs: u32,
}
