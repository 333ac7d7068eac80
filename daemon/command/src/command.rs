//! What a command is: [`CommandSpec`] (the one source of its usage line, summary and help),
//! [`CommandOutput`], how it runs ([`AgentCommand`]), and the extension families — commands
//! with a name prefix that may run in-process ([`ExtensionShortcut`], with the [`CallContext`]
//! each call carries) and agent commands known by the shape of their name ([`CommandFamily`]).
//! What a running command sees is [`crate::context`]; where names are looked up,
//! [`crate::registry`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::context::CommandContext;
use crate::gate::Effect;
use crate::paths::PathResolver;

/// Static documentation of one agent shell command.
#[derive(Debug)]
pub struct CommandSpec {
    /// The command word (`read`, `task:explore`).
    pub name: &'static str,
    /// `read <path> [--offset N] [--limit N]`
    pub usage: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// The full document shown by `--help` and in the system prompt (options, examples).
    pub help: &'static str,
}

impl CommandSpec {
    /// `-h`: the usage line and the summary.
    pub fn short_help(&self) -> String {
        format!("usage: {}\n{}\n", self.usage, self.summary)
    }

    /// `--help`: the whole document.
    pub fn full_help(&self) -> String {
        format!(
            "usage: {}\n{}\n\n{}\n",
            self.usage,
            self.summary,
            self.help.trim_end()
        )
    }

    /// A wrong-usage result: what was wrong, the usage line and where to read more.
    pub fn usage_error(&self, problem: impl std::fmt::Display) -> CommandOutput {
        CommandOutput::failure(
            format!(
                "{}: {problem}\nusage: {}\nrun `{} --help` for details",
                self.name, self.usage, self.name
            ),
            EXIT_USAGE,
        )
    }

    /// Sorts `args` into the options `opts` names and positionals; wrong usage comes back as this
    /// command's usage error, ready to return.
    pub fn parse(
        &self,
        args: Vec<String>,
        opts: &[crate::args::OptSpec],
        unknown: crate::args::UnknownOpts,
    ) -> Result<crate::args::Parsed, CommandOutput> {
        crate::args::parse(args, opts, unknown).map_err(|e| self.usage_error(e))
    }

    /// Runs `work` (file or CPU work that would block the runtime) on the blocking pool; a panic
    /// in it becomes a failure naming this command.
    pub async fn off_thread(
        &self,
        work: impl FnOnce() -> CommandOutput + Send + 'static,
    ) -> CommandOutput {
        let name = self.name;
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or_else(|e| CommandOutput::failure(format!("{name}: {e}"), 1))
    }

    /// The section of the system prompt documenting this command: the `--help` document
    /// without its `Examples:` block (which `--help` still shows), to keep the prompt small.
    pub fn prompt_section(&self) -> String {
        let help = match self.help.find("\nExamples:") {
            Some(i) => &self.help[..i],
            None if self.help.starts_with("Examples:") => "",
            None => self.help,
        };
        let help = help.trim_end();
        if help.is_empty() {
            format!("### {}\n`{}`\n{}\n", self.name, self.usage, self.summary)
        } else {
            format!(
                "### {}\n`{}`\n{}\n\n{help}\n",
                self.name, self.usage, self.summary
            )
        }
    }
}

/// Exit status for wrong usage (as in bash builtins).
pub const EXIT_USAGE: i32 = 2;

/// What a command produced: the text the model sees and an exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// What the model reads.
    pub text: String,
    /// The exit status, as bash would report it.
    pub exit_code: i32,
    /// The session's shell was (re)started while running this command.
    pub restarted: bool,
    /// The command was stopped at its time limit.
    pub timed_out: bool,
    /// The files it changed, for the user's client to show (the model reads `text` only).
    pub changes: Vec<crate::file_change::FileChange>,
}

impl CommandOutput {
    /// Exit 0 with `text`.
    pub fn success(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            exit_code: 0,
            restarted: false,
            timed_out: false,
            changes: Vec::new(),
        }
    }

    /// A failure with `text` (what was wrong) and a non-zero `exit_code`.
    pub fn failure(text: impl Into<String>, exit_code: i32) -> Self {
        Self {
            text: text.into(),
            exit_code,
            restarted: false,
            timed_out: false,
            changes: Vec::new(),
        }
    }

    /// The same output, also reporting `change` (when there is one) to the user's client.
    pub fn with_change(mut self, change: Option<crate::file_change::FileChange>) -> Self {
        self.changes.extend(change);
        self
    }
}

/// An in-process command the router can run.
pub trait AgentCommand: Send + Sync {
    /// The command's name and documentation.
    fn spec(&self) -> &'static CommandSpec;

    /// Runs with the words after the command name. `-h`/`--help` as the first word never get
    /// here; the router answers them from [`AgentCommand::spec`].
    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput>;

    /// The `-h` text (`full`: `--help`) for a session in `dir`: the spec's, unless the command
    /// is documented only when it runs (a custom sub-agent, from its file).
    fn help(&self, full: bool, dir: &Path) -> String {
        let _ = dir;
        if full {
            self.spec().full_help()
        } else {
            self.spec().short_help()
        }
    }

    /// What kind of work a call of this command does, as front ends show it (an editor's icon
    /// and grouping); most commands run something.
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Execute
    }

    /// How the system prompt documents this command; `--help` shows everything either way.
    fn prompt_form(&self) -> PromptForm {
        PromptForm::Full
    }

    /// True for a command whose words name a command it starts (`bash --timeout N '…'`,
    /// `job start '…'`): the permission engine looks inside its words as it does for any
    /// launcher, instead of taking it for an agent command that runs nothing else.
    fn launches(&self) -> bool {
        false
    }

    /// True for a command that never changes anything (`read`, `glob`, `web_fetch`…): its
    /// effect is [`Effect::ReadOnly`] without further ado.
    fn reads_only(&self) -> bool {
        false
    }

    /// What running it with `args` will do, for the permission check; `at` tells where its path
    /// words land. The default is [`Effect::ReadOnly`] for [`AgentCommand::reads_only`]
    /// commands, else [`Effect::Other`], which is asked about in `ask` mode and refused in
    /// `read-only` mode.
    fn effect(&self, args: &[String], at: &PathResolver<'_>) -> Effect {
        let _ = (args, at);
        if self.reads_only() {
            Effect::ReadOnly
        } else {
            Effect::Other
        }
    }
}

/// How a command is documented in the system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptForm {
    /// Its own section: usage, summary and the whole help.
    Full,
    /// One line, name and summary, in the closing "More commands" list: for commands whose
    /// `-h` the model can read when it needs them, to keep the prompt within its budget.
    Brief,
    /// One line, usage and summary, in the "More commands" list: a command a lean prompt (a
    /// sub-agent's) names with its arguments but without its whole help.
    Usage,
}

/// What one extension call carries besides its words, passed down the whole call (never through
/// task-locals a path could forget to set): its cancellation, the calling session's workspace,
/// and for a session's call where the extension's progress goes, who answers its questions
/// (forms, confirmations) and where files it leaves behind go (removed with the session).
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelled when the call is (the user interrupted, the turn ended).
    pub cancel: CancellationToken,
    /// The root of the calling session's workspace (the project answers first).
    pub workspace: Option<PathBuf>,
    /// The calling chat session's id: its own MCP servers answer before anyone's (`None`: a
    /// call from outside a session).
    pub session: Option<String>,
    /// Where the call's live output goes while it runs.
    pub progress: Option<super::progress::ProgressSink>,
    /// Who answers the extension's questions (forms, sampling) for the session.
    pub asker: Option<super::asker::AskerHandle>,
    /// Where files the call leaves behind go (removed with the session).
    pub scratch: Option<PathBuf>,
}

/// A family of extension commands (e.g. every `mcp:*` command) that may run in-process when
/// written as a simple command, instead of spawning its executable from `$SYNAPSE_HOME/bin`.
/// Answering `None` lets the command run natively after all, so both paths give one result.
pub trait ExtensionShortcut: Send + Sync {
    /// The command-name prefix this family answers for (`"mcp:"`).
    fn prefix(&self) -> &'static str;

    /// Runs `name` with its words for the call `call` describes; `None` when `name` is not one
    /// of this family's commands in the call's workspace.
    fn run<'a>(
        &'a self,
        name: &'a str,
        args: Vec<String>,
        call: CallContext,
    ) -> BoxFuture<'a, Option<CommandOutput>>;
}

/// Agent commands whose names are known only when they run (`task:<agent>` for the user's custom
/// sub-agents): the family claims a name by its shape, and the command it gives looks itself
/// up when it runs. A registered command of the same name wins.
pub trait CommandFamily: Send + Sync {
    /// The command for `name`; `None` when the name is not of this family.
    fn command(&self, name: &str) -> Option<Arc<dyn AgentCommand>>;

    /// The names the family has for a session starting in `dir`: its shell defines a function
    /// for each, so they compose in pipes, lists and `$(…)` like the registered commands (a name
    /// added later still runs as a simple command).
    fn names(&self, dir: &Path) -> Vec<String>;
}
