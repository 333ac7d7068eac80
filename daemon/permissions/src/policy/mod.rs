//! The decision: may this action run, must the user approve it, or is it refused?
//!
//! [`decide`] takes an [`Action`] (a native bash command string, an in-process agent command
//! with its known [`Effect`], or an MCP tool call), the session's [`Mode`], the [`RuleSet`] and
//! the [`Context`]. Deny rules refuse in every mode; `yolo` allows the rest. Otherwise each
//! simple command of a native command is judged on its own — rules, the risky list, where it
//! writes, and (in read-only mode without a sandbox) whether it is a known reader — and the
//! whole command runs only if every part may (`native`). Agent commands and MCP tools are
//! judged by their declared effect and hints (`agent`, `mcp`). When the user is asked, the
//! [`Decision::Ask`] carries the pattern an "always" answer would save (`suggest`).

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
    /// It only reads (`read`, `glob`, `search`): runs in every mode unless a rule says otherwise.
    ReadOnly,
    /// Absolute paths it writes.
    Writes(Vec<PathBuf>),
    /// It starts a sub-agent (`task:*`): runs without asking in auto and ask mode.
    SubAgent {
        /// The sub-agent may only read (`task:explore`, or a custom agent with read-only
        /// tools); read-only mode refuses the others.
        read_only: bool,
    },
    /// Nothing is declared: asked about in ask mode, and in read-only mode allowed only when
    /// its command string is a known reader.
    Other,
}

/// Something the model wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action<'a> {
    /// A command for the persistent bash.
    Native {
        /// The command line as the model wrote it, possibly several commands joined by
        /// pipes, `;` or `&&`.
        command: &'a str,
    },
    /// An in-process agent command (`read`, `write`, `edit`, `glob`, `search`, `task:*`, …).
    Agent {
        /// The command's registered name (`write`, `task:explore`), used for messages and
        /// the suggested rule.
        name: &'a str,
        /// The whole command line as the model wrote it; the bash rules match its words.
        command: &'a str,
        /// What the command says it will do with these arguments.
        effect: Effect,
    },
    /// An MCP tool call, with the server's annotations.
    Mcp {
        /// `mcp:server:tool`
        name: &'a str,
        /// The server's `readOnlyHint` annotation; `None` when it gave none. Not trusted when
        /// the tool's name holds a verb such as `delete` or `write`.
        read_only_hint: Option<bool>,
        /// The server's `destructiveHint` annotation; `None` when it gave none.
        destructive_hint: Option<bool>,
    },
}

/// The outcome for one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It may run now.
    Allow {
        /// Run outside the OS sandbox: a rule or yolo allowed something the sandbox would block.
        escalate: bool,
        /// Which rule allowed it, for the transcript.
        note: Option<String>,
    },
    /// The user must approve it first.
    Ask {
        /// Why it needs approval, one clause per part that does, joined with `; `; shown to
        /// the user.
        reason: String,
        /// The pattern "always" would save (`git push --force:*`, `mcp:fs:write_file`); empty
        /// when no rule could ever cover the action (a command that cannot be seen into).
        suggestion: String,
        /// Run outside the OS sandbox once approved.
        escalate: bool,
    },
    /// It may not run; no answer changes that.
    Deny {
        /// Why it is refused: the deny rule and its file, or what the mode forbids.
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
            "{} the deny rule `{}` from {}",
            hit.subject(what),
            hit.pattern,
            hit.source
        ),
    }
}

/// The note on an allow that a rule made.
fn allowed_by_rule(hit: &super::rules::RuleHit) -> String {
    format!("allowed by `{}` from {}", hit.pattern, hit.source)
}
