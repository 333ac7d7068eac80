//! The decision: may this action run, must the user approve it, or is it refused?
//!
//! [`decide`] takes an [`Action`] (a native bash command string, an in-process agent command
//! with its known [`Effect`], or an MCP tool call), the session's [`Mode`], the [`RuleSet`] and
//! the [`Context`]. Deny rules refuse in every mode; `yolo` allows the rest. Otherwise each
//! simple command of a native command is judged on its own — rules, the risky list, where it
//! writes, and (in read-only mode without a sandbox) whether it is a known reader — and the
//! whole command runs only if every part may ([`native`]). Agent commands and MCP tools are
//! judged by their declared effect and hints ([`agent`], [`mcp`]). When the user is asked, the
//! [`Decision::Ask`] carries the pattern an "always" answer would save ([`suggest`]).

mod agent;
mod facts;
mod mcp;
mod mode;
mod native;
mod suggest;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use mode::{Mode, ModeError};

use super::context::Context;
use super::resolve::ShellState;
use super::rules::RuleSet;

/// What an in-process agent command is known to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    ReadOnly,
    /// Absolute paths it writes.
    Writes(Vec<PathBuf>),
    SubAgent {
        read_only: bool,
    },
    Other,
}

/// Something the model wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action<'a> {
    /// A command for the persistent bash.
    Native { command: &'a str },
    /// An in-process agent command (`read`, `write`, `edit`, `glob`, `search`, `task:*`, …).
    Agent {
        name: &'a str,
        command: &'a str,
        effect: Effect,
    },
    /// An MCP tool call, with the server's annotations.
    Mcp {
        /// `mcp:server:tool`
        name: &'a str,
        read_only_hint: Option<bool>,
        destructive_hint: Option<bool>,
    },
}

/// The outcome for one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow {
        /// Run outside the OS sandbox: a rule or yolo allowed something the sandbox would block.
        escalate: bool,
        /// Which rule allowed it, for the transcript.
        note: Option<String>,
    },
    Ask {
        reason: String,
        /// The pattern "always" would save (`git push --force:*`, `mcp:fs:write_file`); empty
        /// when no rule could ever cover the action (a command that cannot be seen into).
        suggestion: String,
        /// Run outside the OS sandbox once approved.
        escalate: bool,
    },
    Deny {
        reason: String,
    },
}

/// Decides whether `action` may run in `mode` under `rules`, in a shell with nothing defined.
pub fn decide(action: &Action, mode: Mode, rules: &RuleSet, ctx: &Context) -> Decision {
    decide_in_shell(action, mode, rules, ctx, &ShellState::default())
}

/// [`decide`] for a shell in `shell`'s state: command names are resolved against its aliases,
/// functions, hashed paths and `PATH` before the rules see them.
pub fn decide_in_shell(
    action: &Action,
    mode: Mode,
    rules: &RuleSet,
    ctx: &Context,
    shell: &ShellState,
) -> Decision {
    match action {
        Action::Native { command } => native::decide(command, mode, rules, ctx, shell),
        Action::Agent {
            name,
            command,
            effect,
        } => agent::decide(name, command, effect, mode, rules, ctx),
        Action::Mcp {
            name,
            read_only_hint,
            destructive_hint,
        } => mcp::decide(name, *read_only_hint, *destructive_hint, mode, rules),
    }
}

/// The message for a deny rule hit.
fn denied_by_rule(what: &str, hit: &super::rules::RuleHit) -> Decision {
    Decision::Deny {
        reason: format!(
            "`{what}` matches the deny rule `{}` from {}",
            hit.pattern, hit.source
        ),
    }
}

/// The note on an allow that a rule made.
fn allowed_by_rule(hit: &super::rules::RuleHit) -> String {
    format!("allowed by `{}` from {}", hit.pattern, hit.source)
}
