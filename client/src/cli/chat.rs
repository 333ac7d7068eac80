//! `synapse chat [--resume [ID]|--continue] [--model M] [--permission-mode MODE]`: the interactive REPL (see
//! [`crate::repl`]).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use synapse_shared::paths::Paths;

use crate::session::OpenOptions;

#[derive(Debug, Default, Args)]
pub struct ChatArgs {
    /// Continue the session with this id; without one, pick it from this folder's sessions
    /// (on a terminal).
    #[arg(
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "continue_latest"
    )]
    pub resume: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub continue_latest: bool,
    /// Model for this session.
    #[arg(long)]
    pub model: Option<String>,
    /// What the agent may do without asking: auto (default), ask, read-only or yolo.
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionMode>,
    /// Claude Code's `--verbose`, accepted so its command lines work here; the REPL shows each
    /// command with its exit status either way (`/expand` shows a whole output).
    #[arg(long)]
    pub verbose: bool,
}

/// The permission modes (`--permission-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PermissionMode {
    /// Read-only commands, writes inside the project, and non-risky commands run; risky ones ask.
    #[value(alias = "acceptEdits")]
    Auto,
    /// Every native command and every write asks.
    #[value(alias = "default")]
    Ask,
    /// Nothing may write (the shell runs in a read-only sandbox where the OS allows).
    #[value(alias = "plan")]
    ReadOnly,
    /// Everything runs, without sandbox or questions (deny rules still hold).
    #[value(alias = "bypassPermissions")]
    Yolo,
}

impl PermissionMode {
    pub fn wire(self) -> &'static str {
        match self {
            PermissionMode::Auto => "auto",
            PermissionMode::Ask => "ask",
            PermissionMode::ReadOnly => "read-only",
            PermissionMode::Yolo => "yolo",
        }
    }
}

/// Starts the REPL; `prompt` (from `synapse "<prompt>"`) is sent as the first message.
pub async fn run(paths: Paths, args: ChatArgs, prompt: Option<String>) -> anyhow::Result<ExitCode> {
    // `--resume` without an id: the user picks, which needs a terminal to pick on.
    let pick = args
        .resume
        .as_deref()
        .is_some_and(|id| id.trim().is_empty());
    if pick && !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        anyhow::bail!(
            "--resume without a session id needs a terminal to pick one on. Name the session: \
             `synapse --resume <id>` (`synapse sessions list` shows the ids), or continue the \
             latest session with `synapse --continue`"
        );
    }
    let options = OpenOptions {
        model: args.model,
        resume_id: args.resume.filter(|_| !pick),
        resume_latest: args.continue_latest,
        permission_mode: args.permission_mode.map(|m| m.wire().to_string()),
        ..OpenOptions::default()
    };
    crate::repl::run(paths, options, prompt, pick).await
}
