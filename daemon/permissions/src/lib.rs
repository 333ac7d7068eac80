//! The permission engine: pure decisions about what the model's actions may do. No I/O — the
//! router, approvals, settings loading and the CLI feed it and act on its answers.
//!
//! Flow: a bash command string is split into simple commands ([`parse`](mod@parse)); each is
//! compared with the user's allow/ask/deny [`rules`] (patterns in [`pattern`]; a deleting program
//! also as the `rm` it amounts to, [`deletes`]), the built-in
//! [`risky`](mod@risky) list, the paths it writes ([`writes`], resolved by [`context`]) and, in
//! read-only mode, the list of known readers ([`readonly`]). [`policy::decide`] combines these
//! for the session's [`Mode`] into a [`Decision`]: allow (perhaps outside the sandbox), ask with
//! a reason and the pattern "always" would save, or deny.
//!
//! Where a line's writes really land — variables of the line and of the session, `~`, every
//! `cd` — is told by [`landing`], for the guard on the rules files.

#![deny(missing_docs)]

pub mod agent_commands;
pub(crate) mod argv;
pub mod claude_tools;
pub mod context;
pub mod deletes;
pub mod landing;
pub mod parse;
pub mod pattern;
pub mod policy;
pub mod readonly;
pub mod resolve;
pub mod risky;
pub mod rules;
pub mod writes;

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod deletes_props;
#[cfg(test)]
mod engine_props;
#[cfg(test)]
mod landing_props;
#[cfg(test)]
mod resolve_props;
#[cfg(test)]
mod rules_props;

pub use agent_commands::AgentCommands;
pub use claude_tools::{ToolRule, ToolRuleError, split_tool_list};
pub use context::{Context, normalize, resolve};
pub use landing::{Landing, Landings, Reach, landings};
pub use parse::{MAX_NESTING, Parsed, Pipeline, Redirect, RedirectOp, SimpleCommand, parse};
pub use pattern::{Pattern, PatternError};
pub use policy::{Action, Decision, Effect, Mode, ModeError, decide, decide_in_shell};
pub use readonly::is_read_only;
pub use resolve::{Resolution, ShellState};
pub use risky::risky;
pub use rules::{RuleHit, RuleKind, RuleSet, Verdict, default_mode, writable_dirs};
pub use writes::write_targets;
