//! The one owner of the wrapper folders: `$SYNAPSE_HOME/bin` (the user's commands) and
//! `$SYNAPSE_HOME/workspaces/<id>/bin` (one project's). Every wrapper — a skill script's
//! `skill:<skill>:<stem>` and an MCP tool's `mcp:<server>:<tool>` — is rendered by
//! [`WrapperScript::render`] (one layout, one quoting rule, help printed from single-quoted
//! words) and written by a [`WrapperFolder`] (one atomicity policy, stale-file pruning per
//! command prefix). The skill store and the MCP managers only say *what* a wrapper runs.
//!
//! Calls never write here: wrappers change when a skill folder or a server's tool list does.

mod folder;
mod script;

pub use folder::{WRAPPER_MODE, WrapperChanges, WrapperFolder, write_new, write_replace};
pub use script::{Help, ScriptError, WrapperScript, clean_text, comment_safe, sh_quote};
