//! The `BashRouter`: turns one Bash-tool call (`command`, `restart`) into a result.
//!
//! A simple command whose first word is a registered agent command runs in-process (answering
//! `-h`/`--help` from its spec); a tool call pasted as a command gets an explanation; everything
//! else runs in the session's persistent shell as typed. Every result carries the exit code in
//! its text when it is not zero, so the model sees what a terminal user would.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
pub use synapse_command::timeouts::{COMMAND_TIMEOUT_DEFAULT, COMMAND_TIMEOUT_MAX};

use tokio_util::sync::CancellationToken;

use super::channel::{ActiveCall, AgentChannel};
use super::session::ShellSession;
use super::syntax::{self, Route};
use synapse_command::gate::{EXIT_REFUSED, GateAction, GateHandle, GateInfo, GateVerdict};
use synapse_command::output_policy::OutputPolicy;
use synapse_command::{ApproverHandle, CommandContext, CommandOutput, CommandRegistry, EXIT_USAGE};

/// One Bash-tool call.
#[derive(Debug, Clone, Default)]
pub struct ToolCall {
    pub command: String,
    pub restart: bool,
    /// `None`: the session's default (`shell.defaultTimeoutSec`, else
    /// [`COMMAND_TIMEOUT_DEFAULT`]); longer than the maximum is clamped.
    pub timeout: Option<Duration>,
    /// Who answers approval requests for this call (`None`: requests are refused).
    pub approver: Option<ApproverHandle>,
    /// The permission check (`None`: everything runs, as for the user's own `synapse exec`).
    pub gate: Option<GateHandle>,
    /// The output cap in characters for this call's result, sized from the session's model
    /// window (`None`: the router's default cap).
    pub output_cap: Option<usize>,
    /// Receives the latest output lines while a native command runs (`None`: nobody watches).
    pub progress: Option<synapse_command::progress::ProgressSink>,
    /// Answers what an in-process extension's server asks of the session: forms, sampling
    /// (`None`: nobody to ask, so they are declined).
    pub asker: Option<synapse_command::asker::AskerHandle>,
    /// What the call's PreToolUse hooks said about its permission (the gate weighs it).
    pub hook: synapse_command::gate::HookPermission,
    /// The editor whose files `read`, `write` and `edit` use inside the session's folder
    /// (`None`: the disk).
    pub editor: Option<synapse_command::editor_files::EditorFilesHandle>,
}

/// What the model receives, plus what the caller may want to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub output: String,
    pub exit_code: i32,
    pub restarted: bool,
    pub timed_out: bool,
    /// The session shell's working directory afterwards.
    pub cwd: std::path::PathBuf,
    /// Images the call produced for the model ([`super::media`]).
    pub images: Vec<synapse_llm::Image>,
    /// The files an in-process `write`/`edit` changed, for the user's client to show.
    pub changes: Vec<synapse_command::file_change::FileChange>,
}

pub struct BashRouter {
    commands: Arc<CommandRegistry>,
    channel: Option<Arc<AgentChannel>>,
    policy: OutputPolicy,
}

impl BashRouter {
    pub fn new(commands: Arc<CommandRegistry>) -> Self {
        let spill_dir =
            std::env::temp_dir().join(format!("synapse-output-{}", nix::unistd::getuid().as_raw()));
        Self {
            commands,
            channel: None,
            policy: OutputPolicy::new(super::capture::OUTPUT_CAP_CHARS, spill_dir),
        }
    }

    /// The output policy every result passes.
    pub fn set_output_policy(&mut self, policy: OutputPolicy) {
        self.policy = policy;
    }

    pub fn output_policy(&self) -> &OutputPolicy {
        &self.policy
    }

    /// Makes agent commands inside compound lines reach this router's commands through
    /// `channel` (the session shells must define its functions).
    pub fn set_channel(&mut self, channel: Arc<AgentChannel>) {
        self.channel = Some(channel);
    }

    pub fn channel(&self) -> Option<&Arc<AgentChannel>> {
        self.channel.as_ref()
    }

    pub fn commands(&self) -> &CommandRegistry {
        &self.commands
    }

    /// Runs one call in `session`. Cancelling `cancel` kills a running native command.
    pub async fn execute(
        &self,
        session: &mut ShellSession,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let timeout = session.timeouts().for_line(&call.command, call.timeout);
        let call_seq = session.begin_call();
        let mut restarted = false;
        // Agent functions in this session's shell act for this call, and only while it runs.
        let _active = match (&self.channel, session.agent_token()) {
            (Some(channel), Some(token)) => Some(channel.activate(
                &token,
                ActiveCall {
                    commands: self.commands.clone(),
                    call: call.clone(),
                    session_name: session.name().to_owned(),
                    spec: session.spec().clone(),
                    output_cap_chars: session.output_cap_chars(),
                    jobs: session.jobs().clone(),
                    timeouts: session.timeouts(),
                    timeout,
                    cancel: cancel.child_token(),
                    call_seq,
                },
            )),
            _ => None,
        };
        session.set_progress(call.progress.clone());
        let mut out = if call.restart {
            restarted = true;
            match session.restart().await {
                Ok(()) if call.command.trim().is_empty() => CommandOutput::success(format!(
                    "Shell restarted in {}.",
                    session.cwd().display()
                )),
                Ok(()) => {
                    self.route(session, &call.command, timeout, cancel, call)
                        .await
                }
                Err(e) => CommandOutput::failure(format!("cannot restart the shell: {e}"), 126),
            }
        } else if call.command.trim().is_empty() {
            CommandOutput::failure(
                "empty command: pass a shell command such as `ls -la` or `read README.md`",
                EXIT_USAGE,
            )
        } else {
            self.route(session, &call.command, timeout, cancel, call)
                .await
        };
        session.set_progress(None);
        // Whatever the line wrote is on disk: listeners catch up before the result returns.
        self.commands.changed(None).await;
        restarted |= out.restarted;
        out.text = self
            .policy
            .apply_capped(session.name(), out.text, call.output_cap);
        if out.exit_code != 0 {
            if !out.text.is_empty() && !out.text.ends_with('\n') {
                out.text.push('\n');
            }
            out.text
                .push_str(&format!("[exit code: {}]", out.exit_code));
        }
        ToolResult {
            images: super::media::images_in(&out.text, session.jobs().dir()),
            output: out.text,
            exit_code: out.exit_code,
            restarted,
            timed_out: out.timed_out,
            cwd: session.cwd().to_path_buf(),
            changes: out.changes,
        }
    }

    async fn route(
        &self,
        session: &mut ShellSession,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
        call: &ToolCall,
    ) -> CommandOutput {
        let known = |w: &str| self.commands.contains(w) || self.commands.shortcut_for(w).is_some();
        let mut route = syntax::classify(command, known);
        // With the agent functions in the shell, bash expands words for agent commands too.
        if self.channel.is_some()
            && matches!(&route, Route::Agent { .. })
            && syntax::needs_expansion(command)
        {
            route = Route::Native;
        }
        match route {
            Route::ToolCallLookalike { suggestion } => tool_call_message(suggestion),
            Route::Agent { mut words, stdin } => {
                let name = words.remove(0);
                if !self.commands.contains(&name) {
                    let verdict = check(call, session, GateAction::Native { command }).await;
                    return match verdict {
                        GateVerdict::Run => {
                            let asker = call.asker.clone();
                            self.shortcut(
                                session, command, &name, words, stdin, timeout, cancel, asker,
                            )
                            .await
                        }
                        GateVerdict::RunUnsandboxed => {
                            session.run_unsandboxed(command, timeout, cancel).await
                        }
                        GateVerdict::Refuse(why) => CommandOutput::failure(why, EXIT_REFUSED),
                    };
                }
                let touched = super::commands::touched_path(&name, &words)
                    .map(|word| session.paths().resolve(&word));
                let mut out = run_agent_command(
                    &self.commands,
                    session,
                    call,
                    &name,
                    words,
                    stdin,
                    command,
                    timeout,
                    cancel,
                )
                .await;
                if let Some(path) = touched.filter(|_| out.exit_code == 0)
                    && let Some(text) = nested_instructions(session, path).await
                {
                    out.text.push_str(&text);
                }
                out
            }
            Route::Native => {
                let mut out = match check(call, session, GateAction::Native { command }).await {
                    GateVerdict::Run => session.run_native(command, timeout, cancel).await,
                    GateVerdict::RunUnsandboxed => {
                        session.run_unsandboxed(command, timeout, cancel).await
                    }
                    GateVerdict::Refuse(why) => return CommandOutput::failure(why, EXIT_REFUSED),
                };
                if let Some(first) = shlex::split(command).and_then(|w| w.into_iter().next())
                    && self.commands.contains(&first)
                    && out.text.contains(&format!("{first}: command not found"))
                {
                    out.text.push_str(&format!(
                        "[`{first}` is an agent command: it runs only as a simple command, \
                         without pipes, redirects, `;`, `&&` or `$(…)`. Run it on its own, or use \
                         a shell tool instead]\n"
                    ));
                }
                out
            }
        }
    }
}

impl BashRouter {
    /// An extension command run in-process when that gives exactly what its executable would:
    /// no heredoc, no help flag (the wrapper prints help), nothing bash would expand.
    #[allow(clippy::too_many_arguments)]
    async fn shortcut(
        &self,
        session: &mut ShellSession,
        command: &str,
        name: &str,
        words: Vec<String>,
        stdin: Option<String>,
        timeout: Duration,
        cancel: &CancellationToken,
        asker: Option<synapse_command::asker::AskerHandle>,
    ) -> CommandOutput {
        // Quoted JSON (`--entities '[{"name": …}]'`) is no expansion: it stays in-process.
        let expands = syntax::needs_expansion(command);
        let help = matches!(words.first().map(String::as_str), Some("-h" | "--help"));
        if let Some(shortcut) = self.commands.shortcut_for(name)
            && stdin.is_none()
            && !expands
            && !help
        {
            // The line's timeout bounds the in-process call as it bounds the wrapper process;
            // dropping the call tells the extension (MCP: `notifications/cancelled`).
            // The call's progress sink and asker travel with it: the MCP connection routes the
            // server's notifications and requests of this call by them.
            let call = synapse_command::CallContext {
                cancel: cancel.clone(),
                workspace: session.workspace_root().map(Path::to_path_buf),
                session: session.own_session().map(str::to_string),
                progress: session.progress(),
                asker,
                scratch: Some(session.jobs().dir().to_path_buf()),
            };
            let run = shortcut.run(name, words, call);
            match tokio::time::timeout(timeout, run).await {
                Ok(Some(out)) => return out,
                Ok(None) => {}
                Err(_) => return shortcut_timed_out(name, timeout),
            }
        }
        session.run_native(command, timeout, cancel).await
    }
}

/// Runs agent command `name` (answering `-h`/`--help` from its spec) after asking the call's
/// gate: the fast path and the agent channel both come here, so both are judged alike.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_agent_command(
    commands: &CommandRegistry,
    session: &mut ShellSession,
    call: &ToolCall,
    name: &str,
    words: Vec<String>,
    stdin: Option<String>,
    command: &str,
    timeout: Duration,
    cancel: &CancellationToken,
) -> CommandOutput {
    let Some(cmd) = commands.get(name) else {
        return CommandOutput::failure(format!("{name}: not an agent command"), EXIT_USAGE);
    };
    if let Some(full) = match words.first().map(String::as_str) {
        Some("-h") => Some(false),
        Some("--help") => Some(true),
        _ => None,
    } {
        let dir = session.workspace_root().unwrap_or(session.cwd());
        return CommandOutput::success(cmd.help(full, dir));
    }
    let effect = cmd.effect(&words, &session.paths());
    let written: Vec<std::path::PathBuf> = match &effect {
        synapse_command::gate::Effect::Writes(paths) => paths.clone(),
        _ => Vec::new(),
    };
    let action = GateAction::Agent {
        name,
        args: &words,
        command,
        effect,
    };
    if let GateVerdict::Refuse(why) = check(call, session, action).await {
        return CommandOutput::failure(why, EXIT_REFUSED);
    }
    let mut ctx = CommandContext::new(session, stdin, timeout, cancel.clone())
        .with_gate(call.gate.clone(), call.approver.clone())
        .with_editor(call.editor.clone());
    let out = cmd.run(&mut ctx, words).await;
    // What the command wrote is acted on before the line's next command runs (a written skill
    // script's `skill:` command exists at once).
    if out.exit_code == 0 && !written.is_empty() {
        commands.changed(Some(written)).await;
    }
    out
}

/// The instruction files of the folders down to `path` that the session has not been given
/// yet, to append to the result of its `read`/`write`/`edit` there. Only on this fast path: in a
/// pipeline the result feeds another program, not the model. The text is for the model only;
/// nothing in it is parsed or grants anything.
async fn nested_instructions(session: &ShellSession, path: std::path::PathBuf) -> Option<String> {
    let workspace = session.spec().workspace.clone()?;
    let name = session.name().to_owned();
    tokio::task::spawn_blocking(move || workspace.instructions.nested(&name, &path))
        .await
        .ok()
        .flatten()
}

fn shortcut_timed_out(name: &str, timeout: Duration) -> CommandOutput {
    CommandOutput {
        text: format!(
            "{name}: timed out after {:.1} s and was cancelled; raise the command's timeout \
             or the server's toolTimeoutSec",
            timeout.as_secs_f64()
        ),
        exit_code: super::session::EXIT_TIMED_OUT,
        restarted: false,
        timed_out: true,
        changes: Vec::new(),
    }
}

/// Asks the call's gate about `action`; no gate means run.
async fn check(call: &ToolCall, session: &ShellSession, action: GateAction<'_>) -> GateVerdict {
    let Some(gate) = &call.gate else {
        return GateVerdict::Run;
    };
    let pids: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();
    let is_session_pid = |pid: i32| pids.get_or_init(|| session.process_ids()).contains(&pid);
    let info = GateInfo {
        cwd: session.cwd(),
        is_session_pid: &is_session_pid,
        sandboxed: session.is_sandboxed() || session.sandbox().is_some_and(|_| sandbox_ready()),
        shell_pid: session.shell_pid(),
        call_seq: session.call_seq(),
        hook: call.hook,
    };
    gate.0.check(action, info).await
}

/// The sandbox will be in force for a shell that has not started yet.
fn sandbox_ready() -> bool {
    static READY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READY.get_or_init(|| {
        matches!(
            synapse_sandbox::support(),
            synapse_sandbox::Support::Landlock { .. }
        ) && synapse_sandbox::launcher().is_some()
    })
}

fn tool_call_message(suggestion: Option<String>) -> CommandOutput {
    let mut text = String::from(
        "This looks like a tool call written inside the command. The Bash tool's `command` is \
         the shell command itself: send `ls -la`, not `Bash(command=\"ls -la\")` or \
         `{\"command\": \"ls -la\"}`.",
    );
    if let Some(s) = suggestion.filter(|s| !s.trim().is_empty()) {
        text.push_str(&format!("\nDid you mean: {s}"));
    }
    CommandOutput::failure(text, EXIT_USAGE)
}
