//! The agent: the loop that talks to the model with the one `Bash` tool ([`runner`]), the tool
//! executor it is given ([`executor`]), keeping history valid ([`history`]), the session files
//! that keep each conversation on disk ([`session_log`]) and the system prompt ([`prompt`]).

pub mod approvals;
pub mod asker;
pub mod attach;
pub mod context;
pub mod custom;
pub mod custom_task;
pub mod editor_link;
pub mod error;
pub mod events;
pub mod executor;
#[cfg(test)]
pub mod fakes;
pub mod flag_settings;
pub mod forms;
pub mod gate;
pub mod history;
pub mod input;
pub mod prompt;
pub mod room;
pub mod runner;
pub mod session;
pub mod session_log;
pub mod sessions;
pub mod shell_executor;
pub mod stop_hook;
pub mod subagent;
pub mod subagent_context;
pub mod task_command;
pub mod transcript;
pub mod turn_prompt;

pub use error::AgentError;
pub use events::{AgentEvent, TurnEnd, TurnFailure};
pub use executor::{BashCall, ToolExecutor, ToolFuture, ToolOutcome};
pub use runner::{AgentRunner, RunnerLimits, TurnOutcome};
