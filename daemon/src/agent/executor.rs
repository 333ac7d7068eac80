//! How the agent runs a `Bash` tool call without knowing who runs it: the session injects a
//! [`ToolExecutor`] (the shell router in the daemon; in unit tests `agent::fakes::FakeExecutor`,
//! with `agent::fakes::ScriptedProvider` for the model).

use std::future::Future;
use std::pin::Pin;

use tokio_util::sync::CancellationToken;

/// One call of the `Bash` tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashCall {
    pub command: String,
    pub restart: bool,
    /// What the call's PreToolUse hooks said about its permission (for the gate).
    pub hook: synapse_command::gate::HookPermission,
}

/// What a call produced: the text the model receives and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub output: String,
    pub exit_code: i32,
    /// Images the command produced for the model (an MCP tool's screenshot).
    pub images: Vec<synapse_llm::Image>,
    /// The files it changed, for the user's client (`write`/`edit` run in-process).
    pub changes: Vec<synapse_command::file_change::FileChange>,
}

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// Runs tool calls. Cancelling `cancel` must stop the running command (kill its process group)
/// and return promptly.
pub trait ToolExecutor: Send + Sync {
    fn execute(&self, call: BashCall, cancel: CancellationToken) -> ToolFuture<'_>;
}
