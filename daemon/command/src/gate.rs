//! The permission check every model command passes before it runs. The router asks the call's
//! [`CommandGate`] (the chat session's permission policy, injected with the call) about each
//! command: native command lines and extension commands by their text, in-process agent
//! commands with their declared [`Effect`]. The gate answers run, run outside the sandbox
//! (the user approved something the sandbox would stop), or refuse with a message for the model.
//! `shell/` knows only this trait; the policy lives in [`synapse_permissions`] and its
//! session-side wiring in the agent.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::paths::PathResolver;

pub use synapse_permissions::Effect;

/// What is about to run.
#[derive(Debug)]
pub enum GateAction<'a> {
    /// A command line for the persistent shell, or an extension command (`mcp:…`, `skill:…`)
    /// written as a simple command.
    /// The command text.
    Native {
        /// The line as written.
        command: &'a str,
    },
    /// An in-process agent command: its name, its words after the name, the whole command
    /// text, and what it will do.
    Agent {
        /// The command word.
        name: &'a str,
        /// The words after it.
        args: &'a [String],
        /// The whole command as written.
        command: &'a str,
        /// What running it will do.
        effect: Effect,
    },
}

impl GateAction<'_> {
    /// The command line this action hands to the shell: a native command's text, or what the
    /// agent command `bash` runs (its words, or the whole command when it starts the real
    /// bash with options), or what `job start` starts. `None` for every other agent command.
    pub fn shell_line(&self) -> Option<String> {
        match self {
            GateAction::Native { command } => Some(command.to_string()),
            GateAction::Agent {
                name: "bash",
                args,
                command,
                ..
            } => match args.first() {
                None => None,
                Some(first) if first.starts_with('-') => Some(command.to_string()),
                Some(_) => Some(args.join(" ")),
            },
            GateAction::Agent {
                name: "job", args, ..
            } => match args.split_first() {
                Some((sub, rest)) if sub == "start" => start_line(rest),
                _ => None,
            },
            GateAction::Agent { .. } => None,
        }
    }
}

/// The command line `job start` runs: one word as typed, several re-quoted as given.
pub fn start_line(words: &[String]) -> Option<String> {
    match words {
        [] => None,
        [one] => Some(one.clone()),
        many => shlex::try_join(many.iter().map(String::as_str)).ok(),
    }
}

/// Facts about the session the gate may need.
#[derive(Clone, Copy)]
pub struct GateInfo<'a> {
    /// The session shell's current folder.
    pub cwd: &'a Path,
    /// Whether a pid is the session shell or something it started (killing those is not
    /// risky). Looked up only when asked: it scans every process.
    pub is_session_pid: &'a (dyn Fn(i32) -> bool + Sync),
    /// The session shell runs inside the OS sandbox.
    pub sandboxed: bool,
    /// The running session shell's pid (`None` before it starts): a new pid means a fresh
    /// shell, without the aliases and functions of the last one.
    pub shell_pid: Option<i32>,
    /// The Bash-tool call this check belongs to (agent commands a line runs share its number).
    pub call_seq: u64,
    /// What the call's PreToolUse hooks said about its permission.
    pub hook: HookPermission,
}

/// What a tool call's PreToolUse hooks said about its permission (Claude Code's
/// `permissionDecision`; a `deny` never gets this far: the call is blocked before it runs). A
/// gate may let `Allow` turn a question into a run and must let `Ask` turn a run into a
/// question; neither ever lifts a deny rule or the sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HookPermission {
    #[default]
    /// The hooks said nothing (or there were none).
    Unsaid,
    /// A hook allowed the call.
    Allow,
    /// A hook asked for the user's word.
    Ask,
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    /// Run as asked.
    Run,
    /// Run once outside the sandbox (native commands only; agent commands just run).
    RunUnsandboxed,
    /// Do not run; the text tells the model what was refused and why.
    Refuse(String),
}

/// Decides whether a command may run (and asks the user when the policy says so).
pub trait CommandGate: Send + Sync {
    /// Decides about `action` for the session `info` describes; may ask the user first.
    fn check<'a>(
        &'a self,
        action: GateAction<'a>,
        info: GateInfo<'a>,
    ) -> BoxFuture<'a, GateVerdict>;

    /// The same gate restricted to read-only mode (for `task:explore`); `None` if it has none.
    fn read_only(&self) -> Option<GateHandle> {
        None
    }

    /// A loaded skill's `allowed-tools` (as permission patterns). Granted patterns remove the
    /// question only for what already runs inside the sandbox: never a command the sandbox
    /// would stop, never an in-process write outside the writable folders. Unless the user
    /// approved this exact skill content (`grant.approved`), an interactive gate asks the user
    /// first; a gate that cannot ask, or has no session rules, grants nothing.
    fn grant_skill_tools<'a>(
        &'a self,
        grant: SkillToolsGrant<'a>,
    ) -> BoxFuture<'a, SkillToolsAnswer> {
        let _ = grant;
        Box::pin(async { SkillToolsAnswer::NotGranted { asked: false } })
    }
}

/// A skill's `allowed-tools` offered to the gate at `skill load`.
#[derive(Debug, Clone, Copy)]
pub struct SkillToolsGrant<'a> {
    /// The skill's name.
    pub skill: &'a str,
    /// The list translated to permission patterns (`write:*`, `git add:*`).
    pub patterns: &'a [String],
    /// The user approved this exact skill content.
    pub approved: bool,
}

/// The gate's answer to a [`SkillToolsGrant`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillToolsAnswer {
    /// Pre-approved for the rest of the session (inside the sandbox); patterns that could not
    /// be read.
    /// Granted for the session.
    Granted {
        /// Patterns that could not be read.
        problems: Vec<String>,
    },
    /// The user answered "always": granted, and the caller records the approval of this
    /// content so the next session does not ask.
    /// Granted for good.
    GrantedAlways {
        /// Patterns that could not be read.
        problems: Vec<String>,
    },
    /// Nothing granted: the user said no (`asked`), or nobody could be asked.
    /// Not granted.
    NotGranted {
        /// The user was asked (and said no).
        asked: bool,
    },
}

/// A cloneable, printable handle to a [`CommandGate`].
#[derive(Clone)]
pub struct GateHandle(pub Arc<dyn CommandGate>);

impl std::fmt::Debug for GateHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GateHandle")
    }
}

/// The effect of a command that writes the file named by the path word `path` (`write`,
/// `edit`): that file where the write will land (`~` expanded, symlinks followed).
pub fn writes_to(path: Option<&str>, at: &PathResolver<'_>) -> Effect {
    Effect::Writes(path.map(|p| vec![at.landing(p)]).unwrap_or_default())
}

/// Exit status of a refused command (as the shell's "cannot execute").
pub const EXIT_REFUSED: i32 = 126;
