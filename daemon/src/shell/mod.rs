//! The one Bash tool: what runs behind `Bash {command, restart}`.
//!
//! A call enters through [`ShellSessions::execute`] (by session name) or
//! [`BashRouter::execute`] (with a [`ShellSession`] in hand). The router reads the command
//! string ([`syntax`]): a simple command naming a registered [`AgentCommand`] runs in-process
//! (`read`, `write`, `edit`, `glob`, `search`, `bash` from [`commands`], plus whatever other
//! subsystems register); anything else runs as typed in the session's persistent bash
//! ([`process`]), whose output is captured with a cap ([`capture`]) and whose completion, exit
//! code and cwd come from a sentinel ([`sentinel`]). Timeouts and cancels kill the command's
//! process groups ([`procs`]).
//!
//! To add a command from another subsystem: implement [`AgentCommand`] with a static
//! [`CommandSpec`], register it on the registry from [`commands::builtin_registry`], and hand
//! that registry to [`ShellSessions::new`]. `shell/` never imports its commands' subsystems.
//! A command sees its session only through [`command::CommandHost`] (the session's shell here,
//! `fake_host::FakeHost` in unit tests, which runs commands without bash).

pub mod args;
pub mod asker;
pub mod capture;
pub mod cgroup;
pub mod channel;
pub mod command;
pub mod commands;
pub mod error_names;
pub mod examples;
#[cfg(test)]
pub mod fake_host;
pub mod gate;
pub mod jobs;
mod launch;
pub mod limits;
pub mod media;
pub mod output_policy;
pub mod paths;
pub mod process;
pub mod procs;
pub mod progress;
pub mod router;
pub mod sentinel;
pub mod session;
pub mod sessions;
pub mod spec;
pub mod syntax;

pub use launch::bash_path;
pub mod timeouts;

#[cfg(test)]
mod progress_tests;
#[cfg(test)]
mod sandbox_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod tests;

pub use asker::{AskerHandle, SessionAsker};
pub use capture::OUTPUT_CAP_CHARS;
pub use command::{
    AgentCommand, CommandContext, CommandOutput, CommandRegistry, CommandSpec, PromptForm,
};
pub use commands::builtin_registry;
pub use gate::{
    CommandGate, GateAction, GateHandle, GateInfo, GateVerdict, SkillToolsAnswer, SkillToolsGrant,
};
pub use output_policy::cap_for_window;
pub use paths::PathResolver;
pub use progress::ProgressSink;
pub use router::{BashRouter, COMMAND_TIMEOUT_DEFAULT, COMMAND_TIMEOUT_MAX, ToolCall, ToolResult};
pub use session::ShellSession;
pub use sessions::{SESSION_IDLE_TIMEOUT, SessionError, SessionOrigin, ShellSessions};
pub use spec::{ShellSpec, ShellWorkspace};
pub use timeouts::Timeouts;
