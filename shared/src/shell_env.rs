//! The variables the daemon writes into every agent shell's start-up environment. The daemon's
//! shell layer sets them when it starts a shell or a command; the rest read them back: the
//! process reaper finds a shell's processes by its tag, the daemon's peer check reads a sandboxed
//! shell's workspace and scratch folder from its session leader's environment in `/proc` (which
//! the daemon wrote and no command in the shell can change), and `synapse mcp call` run inside a
//! shell passes its scratch folder on.

/// Carries a shell's tag into every process it starts (even ones that leave its process tree
/// with `setsid` or a double fork).
pub const SHELL_TAG_VAR: &str = "SYNAPSE_SHELL_TAG";
/// Carries one command's tag into every process that command starts.
pub const COMMAND_TAG_VAR: &str = "SYNAPSE_COMMAND_TAG";
/// Names the workspace root of a shell bound to one.
pub const WORKSPACE_VAR: &str = "SYNAPSE_WORKSPACE";
/// Names the chat session a shell runs for: `synapse mcp call` passes it on, so the session's
/// own MCP servers answer (and a strict session's limits hold); the daemon's peer check reads it
/// back from a sandboxed shell's session leader.
pub const SESSION_VAR: &str = "SYNAPSE_SESSION";
/// Names a shell's scratch folder (where an MCP call made from it saves its images).
pub const SCRATCH_VAR: &str = "SYNAPSE_SCRATCH";
