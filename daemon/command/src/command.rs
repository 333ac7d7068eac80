//! The agent shell command interface: what a command is ([`CommandSpec`], the one source of its
//! usage line, summary and help), how it runs ([`AgentCommand`]), what it sees
//! ([`CommandContext`]) and the [`CommandRegistry`] the router looks names up in.
//!
//! Subsystems outside `shell/` (skills, sub-agents, web) implement [`AgentCommand`] and
//! register it; the router never imports them.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::gate::{Effect, GateHandle};
use super::paths::PathResolver;

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

/// Asks the user to allow something (a skill marked `ask`, later a risky command). The chat
/// session implements it with an approval event its client answers; without one, nothing is
/// allowed.
pub trait Approver: Send + Sync {
    /// True when the user allowed it.
    fn ask<'a>(&'a self, title: String, detail: String) -> BoxFuture<'a, bool>;
}

/// A cloneable, printable handle to an [`Approver`].
#[derive(Clone)]
pub struct ApproverHandle(pub Arc<dyn Approver>);

impl std::fmt::Debug for ApproverHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApproverHandle")
    }
}

/// What an agent command runs against: the session's shell and what is known about it. The
/// real one is the session's persistent shell (`ShellSession`); unit tests give a fake, so a
/// command is tested without bash. Only [`name`](Self::name), [`cwd`](Self::cwd),
/// [`env`](Self::env) and [`run_native`](Self::run_native) have no default.
pub trait CommandHost: Send + Sync {
    /// The shell session's name (for chat sessions, the chat session id).
    fn name(&self) -> &str;

    /// The shell's current directory (what `pwd` printed after the last command).
    fn cwd(&self) -> &Path;

    /// The environment the session was created with.
    fn env(&self) -> &[(OsString, OsString)];

    /// A variable of [`env`](Self::env).
    fn env_var(&self, name: &str) -> Option<&OsString> {
        self.env().iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// How path words resolve here right now (current folder, `HOME`).
    fn paths(&self) -> PathResolver<'_> {
        PathResolver {
            cwd: self.cwd(),
            home: self.env_var("HOME").map(Path::new),
        }
    }

    /// The OS sandbox the shell runs in.
    fn sandbox(&self) -> Option<&synapse_sandbox::SandboxSpec> {
        None
    }

    /// The root of the workspace the session is bound to.
    fn workspace_root(&self) -> Option<&Path> {
        None
    }

    /// The session's timeout limits (`shell.defaultTimeoutSec`, `shell.maxTimeoutSec`).
    fn timeouts(&self) -> super::timeouts::Timeouts {
        super::timeouts::Timeouts::default()
    }

    /// The output cap of the session's results, in characters.
    fn output_cap_chars(&self) -> usize {
        crate::output_policy::OUTPUT_CAP_CHARS
    }

    /// Runs a command line in the shell, as if it had been typed; never fails: problems become
    /// the result text.
    fn run_native<'a>(
        &'a mut self,
        command: &'a str,
        timeout: Duration,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, CommandOutput>;

    /// A part of the real shell that only some commands use (its background jobs, the spec its
    /// shells start from, its workspace binding), looked up by type; `None` where the host has
    /// no such part. Read it with [`CommandContext::part`].
    fn part(&self, of: std::any::TypeId) -> Option<&dyn std::any::Any> {
        let _ = of;
        None
    }
}

/// What a running command may use: its host's current directory and environment, heredoc
/// input, its time budget, cancellation, the call's gate and approver, and the host's shell for
/// native execution.
pub struct CommandContext<'s> {
    pub(super) host: &'s mut dyn CommandHost,
    pub(super) stdin: Option<String>,
    pub(super) timeout: Duration,
    pub(super) cancel: CancellationToken,
    pub(super) approver: Option<ApproverHandle>,
    pub(super) gate: Option<GateHandle>,
}

impl<'s> CommandContext<'s> {
    /// A context for one run of a command on `host`: heredoc input, the time budget and
    /// cancellation of the call, and no gate or approver (see [`with_gate`](Self::with_gate)).
    pub fn new(
        host: &'s mut dyn CommandHost,
        stdin: Option<String>,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            host,
            stdin,
            timeout,
            cancel,
            approver: None,
            gate: None,
        }
    }

    /// The call's permission gate and who answers its questions.
    pub fn with_gate(mut self, gate: Option<GateHandle>, approver: Option<ApproverHandle>) -> Self {
        self.gate = gate;
        self.approver = approver;
        self
    }

    /// The permission gate of the call (sub-agents started from here pass it too).
    pub fn gate(&self) -> Option<&GateHandle> {
        self.gate.as_ref()
    }

    /// The OS sandbox the session's shell runs in.
    pub fn sandbox(&self) -> Option<&synapse_sandbox::SandboxSpec> {
        self.host.sandbox()
    }

    /// Asks the session's user; refused when the session has nobody to ask.
    pub async fn approve(&self, title: String, detail: String) -> bool {
        match &self.approver {
            Some(a) => a.0.ask(title, detail).await,
            None => false,
        }
    }

    /// The root of the workspace the session is bound to.
    pub fn workspace(&self) -> Option<&Path> {
        self.host.workspace_root()
    }

    /// A part of the host only some commands use, by type ([`CommandHost::part`]).
    pub fn part<T: 'static>(&self) -> Option<&T> {
        self.host
            .part(std::any::TypeId::of::<T>())?
            .downcast_ref::<T>()
    }

    /// The session shell's current directory (what `pwd` printed after the last command).
    pub fn cwd(&self) -> &Path {
        self.host.cwd()
    }

    /// The shell session's name (for chat sessions, the chat session id).
    pub fn session_name(&self) -> &str {
        self.host.name()
    }

    /// The environment the session was created with.
    pub fn env(&self) -> &[(OsString, OsString)] {
        self.host.env()
    }

    /// The session's environment as UTF-8 pairs (what a sub-agent started from here inherits;
    /// variables that are not UTF-8 are left out).
    pub fn env_map(&self) -> std::collections::HashMap<String, String> {
        self.env()
            .iter()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v.to_str()?.to_string())))
            .collect()
    }

    /// A variable of the environment the session was created with.
    pub fn env_var(&self, name: &str) -> Option<&OsString> {
        self.host.env_var(name)
    }

    /// Input given with a heredoc (`cmd args <<'EOF' … EOF`), verbatim.
    pub fn stdin(&self) -> Option<&str> {
        self.stdin.as_deref()
    }

    /// The time budget of this run.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The session's timeout limits (`shell.defaultTimeoutSec`, `shell.maxTimeoutSec`).
    pub fn timeouts(&self) -> super::timeouts::Timeouts {
        self.host.timeouts()
    }

    /// The output cap of the session's results, in characters.
    pub fn output_cap_chars(&self) -> usize {
        self.host.output_cap_chars()
    }

    /// Cancelled when the call is.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Resolves a path the model wrote: `~` and `~/…` against `HOME`, relative paths against
    /// the shell's current directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        self.host.paths().resolve(path)
    }

    /// `path` as the model should see it: relative to the current directory when below it.
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(self.cwd()) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// Runs a command line in the session's persistent shell with its own time limit.
    pub async fn run_native_for(&mut self, command: &str, timeout: Duration) -> CommandOutput {
        self.host.run_native(command, timeout, &self.cancel).await
    }

    /// Runs a command line in the session's persistent shell, as if it had been typed.
    pub async fn run_native(&mut self, command: &str) -> CommandOutput {
        self.host
            .run_native(command, self.timeout, &self.cancel)
            .await
    }
}

/// The agent shell commands by name.
#[derive(Clone, Default)]
pub struct CommandRegistry {
    commands: BTreeMap<&'static str, Arc<dyn AgentCommand>>,
    shortcuts: Vec<Arc<dyn ExtensionShortcut>>,
    families: Vec<Arc<dyn CommandFamily>>,
}

impl CommandRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a command under its spec's name.
    pub fn register(&mut self, command: Arc<dyn AgentCommand>) -> &mut Self {
        self.commands.insert(command.spec().name, command);
        self
    }

    /// Adds an in-process short-cut for a family of extension commands.
    pub fn register_shortcut(&mut self, shortcut: Arc<dyn ExtensionShortcut>) -> &mut Self {
        self.shortcuts.push(shortcut);
        self
    }

    /// The short-cut whose prefix `name` starts with.
    pub fn shortcut_for(&self, name: &str) -> Option<&Arc<dyn ExtensionShortcut>> {
        self.shortcuts
            .iter()
            .find(|s| name.starts_with(s.prefix()) && name.len() > s.prefix().len())
    }

    /// Adds a family of commands known only by the shape of their names.
    pub fn register_family(&mut self, family: Arc<dyn CommandFamily>) -> &mut Self {
        self.families.push(family);
        self
    }

    /// The registered command `name`, else a family's.
    pub fn get(&self, name: &str) -> Option<Arc<dyn AgentCommand>> {
        self.commands
            .get(name)
            .cloned()
            .or_else(|| self.families.iter().find_map(|f| f.command(name)))
    }

    /// Whether `name` is a registered command or one of a family's.
    pub fn contains(&self, name: &str) -> bool {
        self.commands.contains_key(name) || self.families.iter().any(|f| f.command(name).is_some())
    }

    /// The names of every command a session shell starting in `dir` defines as a function:
    /// the registered commands and the families' names for that folder.
    pub fn function_names(&self, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = self.commands.keys().map(|n| n.to_string()).collect();
        for family in &self.families {
            names.extend(
                family
                    .names(dir)
                    .into_iter()
                    .filter(|n| !self.commands.contains_key(n.as_str())),
            );
        }
        names
    }

    /// The specs of the registered commands, by name.
    pub fn specs(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.commands.values().map(|c| c.spec())
    }

    /// The registered commands the permission engine takes for the agent's own (every one but
    /// the launchers): the one list of agent command names it judges lines by.
    pub fn agent_commands(&self) -> synapse_permissions::AgentCommands {
        synapse_permissions::AgentCommands::new(
            self.commands
                .iter()
                .filter(|(_, c)| !c.launches())
                .map(|(name, _)| *name),
        )
    }

    /// The system-prompt section documenting every registered command.
    pub fn system_prompt_section(&self) -> String {
        self.system_prompt_section_where(|_| true)
    }

    /// The system-prompt section documenting the registered commands `keep` accepts (a
    /// sub-agent is not told about the commands it may not run).
    pub fn system_prompt_section_where(&self, keep: impl Fn(&CommandSpec) -> bool) -> String {
        let mut out = String::from(
            "## Agent shell commands\n\nThese are commands of your shell: they work in pipes, lists, \
             `$(…)`, redirects and loops, bash expands their words (`'\\n'` stays literal), and \
             they win over same-named programs; `read` with bash options or a variable name is \
             bash's builtin. Each answers `-h` and `--help`.\n\n",
        );
        let mut brief = String::new();
        for command in self.commands.values() {
            let spec = command.spec();
            if !keep(spec) {
                continue;
            }
            match command.prompt_form() {
                PromptForm::Full => {
                    out.push_str(&spec.prompt_section());
                    out.push('\n');
                }
                PromptForm::Brief => {
                    brief.push_str(&format!("- `{}`: {}\n", spec.name, spec.summary));
                }
            }
        }
        if !brief.is_empty() {
            out.push_str("### More commands\n");
            out.push_str(&brief);
        }
        out
    }
}
