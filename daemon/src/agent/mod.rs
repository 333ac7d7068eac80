//! The agent: the loop that talks to the model with the one `Bash` tool ([`runner`]), the tool
//! executor it is given ([`executor`]), keeping history valid ([`history`]), the session files
//! that keep each conversation on disk ([`session_log`]) and the system prompt ([`prompt`]).

pub mod events;
pub mod executor;
pub mod history;
pub mod runner;
pub mod session_log;

pub use events::{AgentEvent, TurnEnd};
pub use executor::{BashCall, ToolExecutor, ToolFuture, ToolOutcome};
pub use runner::{AgentRunner, RunnerLimits, TurnOutcome};
