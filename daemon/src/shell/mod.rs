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

pub mod call_kind;
pub mod capture;
pub mod cgroup;
pub mod channel;
pub mod commands;
pub mod error_names;
pub mod examples;
#[cfg(test)]
pub mod fake_host;
pub mod jobs;
mod launch;
pub mod limits;
pub mod media;
pub mod process;
pub mod procs;
pub mod router;
pub mod sentinel;
pub mod session;
pub mod sessions;
mod slot;
pub mod spare;
pub mod spec;
pub mod syntax;
pub mod tmp_bound;

pub use launch::bash_path;

#[cfg(test)]
mod progress_tests;
#[cfg(test)]
mod registry_tests;
#[cfg(test)]
mod sandbox_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod tests;

// The extension contract's types the shell's callers name through it (`synapse_command`).
pub use capture::OUTPUT_CAP_CHARS;
pub use commands::builtin_registry;
pub use router::{BashRouter, COMMAND_TIMEOUT_DEFAULT, COMMAND_TIMEOUT_MAX, ToolCall, ToolResult};
pub use session::ShellSession;
pub use sessions::{SESSION_IDLE_TIMEOUT, SessionError, SessionOrigin, ShellSessions};
pub use spec::{SecretVariables, SessionTools, ShellSpec, ShellWorkspace};
pub use synapse_command::asker::{AskerHandle, SessionAsker};
pub use synapse_command::gate::{
    CommandGate, GateAction, GateHandle, GateInfo, GateVerdict, SkillToolsAnswer, SkillToolsGrant,
};
pub use synapse_command::output_policy::cap_for_window;
pub use synapse_command::paths::PathResolver;
pub use synapse_command::progress::ProgressSink;
pub use synapse_command::timeouts::Timeouts;
pub use synapse_command::{
    AgentCommand, CommandContext, CommandOutput, CommandRegistry, CommandSpec, PromptForm,
};
