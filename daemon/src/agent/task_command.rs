//! `task:general` and `task:explore`: hand a self-contained job to a sub-agent with its own shell
//! session and context, and get its summary back as the command's output. `explore` is
//! read-only (see [`super::subagent`] for exactly what that guards). Sub-agents cannot start
//! sub-agents.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::TurnEnd;
use super::runner::RunnerLimits;
use super::subagent::{SubAgentPolicy, SubAgentRequest, SubAgentRunner};
use synapse_command::args::{OptSpec, UnknownOpts, parse};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Model calls a task sub-agent may make.
pub const TASK_MAX_ITERATIONS: u32 = 30;

pub static GENERAL_SPEC: CommandSpec = CommandSpec {
    name: "task:general",
    usage: "task:general --prompt <task> --description <short label>",
    summary: "Hand a self-contained job to a sub-agent; its summary comes back as the output.",
    help: "\
The sub-agent gets its own shell (starting here) and context, your commands except task:*, and
at most 30 model calls. --prompt must say everything it needs; --description is a short label.

Examples:
  task:general --prompt \"Count the lines of every .rs file under src and report the total\" --description \"count lines\"",
};

pub static EXPLORE_SPEC: CommandSpec = CommandSpec {
    name: "task:explore",
    usage: "task:explore --prompt <question> --description <short label>",
    summary: "Ask a read-only sub-agent to investigate code or files and report its findings.",
    help: "\
Like task:general, but nothing may change: write, edit, output redirection and commands that
modify files are refused. Use it to search widely without filling your own context.

Examples:
  task:explore --prompt \"Which file defines main, and what does it call first?\" --description \"find main\"",
};

const OPTIONS: &[OptSpec] = &[OptSpec::value("--prompt"), OptSpec::value("--description")];

/// The words of every `task:*` command: `--prompt <text>` (required) and `--description
/// <label>` (default "task"). A usage error comes back as the command's output.
pub fn parse_task_args(
    spec: &CommandSpec,
    args: Vec<String>,
) -> Result<(String, String), CommandOutput> {
    parse_task_words(args).map_err(|e| spec.usage_error(e))
}

/// [`parse_task_args`] with the problem as text (for a command that names itself).
pub fn parse_task_words(args: Vec<String>) -> Result<(String, String), String> {
    let parsed = parse(args, OPTIONS, UnknownOpts::Reject)?;
    let prompt = parsed
        .value("--prompt")
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| "missing --prompt <text>".to_string())?;
    let description = parsed.value("--description").unwrap_or("task");
    Ok((prompt.to_string(), description.to_string()))
}

/// What a `task:*` command prints: `[name · description]` and the sub-agent's report, or why it
/// stopped.
pub fn task_output(
    name: &str,
    description: &str,
    result: Result<super::TurnOutcome, super::AgentError>,
) -> CommandOutput {
    match result {
        Err(e) => CommandOutput::failure(format!("{name}: {e}"), 1),
        Ok(outcome) => {
            let mut text = format!("[{name} · {description}]\n");
            text.push_str(outcome.final_text.trim());
            match outcome.end {
                TurnEnd::Completed => CommandOutput::success(text),
                other => {
                    text.push_str(&format!("\n[the sub-agent stopped: {}]", other.message()));
                    CommandOutput::failure(text, 1)
                }
            }
        }
    }
}

const SUBAGENT_ROLE: &str = "You are a Synapse sub-agent. Another agent gave you one \
self-contained job. Work through the `Bash` tool as described below until the job is done, \
then answer with a concise report: what you did or found, with file paths, and anything left \
open. You cannot start other sub-agents (task:* is refused).";

/// What `task:explore`'s sub-agent is told besides its commands: it is read-only, and its shell
/// runs the native commands that only read.
const EXPLORE_RULES: &str = "\n\nThis job is read-only: change nothing. Your shell also runs \
the programs that only read (`ls`, `cat`, `grep`, `find`, `git log`…); anything that writes is \
refused.";

/// Which task command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    General,
    Explore,
}

/// A `task:*` command: runs its job on `subagents`.
pub struct TaskCommand {
    pub kind: TaskKind,
    pub subagents: Arc<dyn SubAgentRunner>,
}

impl AgentCommand for TaskCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Think
    }

    fn effect(
        &self,
        _args: &[String],
        _at: &crate::shell::PathResolver<'_>,
    ) -> synapse_command::gate::Effect {
        synapse_command::gate::Effect::SubAgent {
            read_only: self.kind == TaskKind::Explore,
        }
    }

    fn spec(&self) -> &'static CommandSpec {
        match self.kind {
            TaskKind::General => &GENERAL_SPEC,
            TaskKind::Explore => &EXPLORE_SPEC,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let spec = self.spec();
            let (prompt, description) = match parse_task_args(spec, args) {
                Ok(words) => words,
                Err(usage) => return usage,
            };
            let subagents = &self.subagents;
            let (policy, rules, doc) = match self.kind {
                TaskKind::General => (SubAgentPolicy::General, "", subagents.commands_doc()),
                TaskKind::Explore => (
                    SubAgentPolicy::ReadOnly,
                    EXPLORE_RULES,
                    subagents.read_only_commands_doc(),
                ),
            };
            let env = ctx.env_map();
            let request = SubAgentRequest {
                system: format!(
                    "{SUBAGENT_ROLE}{rules}\n\n{}\n\n# Environment\n\n- Working directory: {}\n",
                    doc.trim_end(),
                    ctx.cwd().display()
                ),
                prompt: prompt.to_string(),
                cwd: ctx.cwd().to_path_buf(),
                env,
                policy,
                limits: RunnerLimits {
                    max_iterations: TASK_MAX_ITERATIONS,
                    ..RunnerLimits::default()
                },
                workspace: ctx.part::<crate::workspace::WorkspaceBinding>().cloned(),
                caller: Some(ctx.session_name().to_string()),
                gate: match self.kind {
                    TaskKind::General => ctx.gate().cloned(),
                    TaskKind::Explore => ctx.gate().and_then(|g| g.0.read_only()),
                },
                sandbox: match self.kind {
                    TaskKind::General => ctx.sandbox().cloned(),
                    // Read-only wherever the OS allows it, whatever the caller's mode.
                    TaskKind::Explore => Some(synapse_sandbox::SandboxSpec {
                        writable: Vec::new(),
                        read_only: true,
                        protected: Vec::new(),
                    }),
                },
                context: None,
                model: None,
            };
            let cancel = ctx.cancel().clone();
            task_output(
                spec.name,
                &description,
                subagents.run(request, &cancel).await,
            )
        })
    }
}
