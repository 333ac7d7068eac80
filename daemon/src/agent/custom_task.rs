//! `task:<name>` for the user's custom sub-agents (`agents/<name>.md`, see [`super::custom`]):
//! a [`CommandFamily`] that claims every `task:<name>` the built-in tasks do not, and looks the
//! agent up for the session's folder when it runs (so an agent added or edited counts at once).
//!
//! The sub-agent's system prompt is the file's body, then what it needs to work here: the agent
//! commands its tools allow and its folder. Its `tools` become its policy
//! ([`SubAgentPolicy::Tools`]); with neither `Bash` nor a write tool it also gets the caller's
//! gate and OS sandbox in their read-only form, as `task:explore` does. Without `tools` it has
//! what `task:general` has. Its `model`, when it names one, is the model of its requests.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::custom::agent_def::{CustomAgent, check_name};
use super::custom::{CustomCatalog, Lookup, explicit_model};
use super::runner::RunnerLimits;
use super::subagent::{SubAgentPolicy, SubAgentRequest, SubAgentRunner};
use super::task_command::{TASK_MAX_ITERATIONS, parse_task_words, task_output};
use synapse_command::{
    AgentCommand, CommandContext, CommandFamily, CommandOutput, CommandSpec, EXIT_USAGE,
};

/// Exit status when no agent has the name (as for a command that is not found).
const EXIT_NO_AGENT: i32 = 127;

/// The documentation every custom agent shares; `-h` shows the agent's own.
static CUSTOM_SPEC: CommandSpec = CommandSpec {
    name: "task:<agent>",
    usage: "task:<agent> --prompt <task> --description <short label>",
    summary: "Hand a job to one of the user's custom sub-agents (agents/<agent>.md).",
    help: "\
The sub-agent has its own shell and context, the system prompt and tools its file gives it, and
at most 30 model calls. --prompt must say everything it needs; --description is a short label.",
};

const SUBAGENT_NOTE: &str = "You run as a sub-agent: another agent gave you one self-contained \
job. Work through the `Bash` tool as described below until it is done, then answer with a \
concise report: what you did or found, with file paths, and anything left open. You cannot \
start other sub-agents (task:* is refused).";

/// Claims `task:<name>` for custom agents.
pub struct CustomTaskFamily {
    pub catalog: Arc<CustomCatalog>,
    pub subagents: Arc<dyn SubAgentRunner>,
}

impl CommandFamily for CustomTaskFamily {
    fn names(&self, dir: &Path) -> Vec<String> {
        self.catalog
            .load(dir)
            .agents
            .into_iter()
            .filter(|a| check_name(&a.name).is_ok())
            .map(|a| format!("task:{}", a.name))
            .collect()
    }

    fn command(&self, name: &str) -> Option<Arc<dyn AgentCommand>> {
        let agent = name.strip_prefix("task:")?;
        check_name(agent).ok()?;
        Some(Arc::new(CustomTaskCommand {
            name: agent.to_string(),
            catalog: self.catalog.clone(),
            subagents: self.subagents.clone(),
        }))
    }
}

/// `task:<name>` for one name.
pub struct CustomTaskCommand {
    name: String,
    catalog: Arc<CustomCatalog>,
    subagents: Arc<dyn SubAgentRunner>,
}

impl CustomTaskCommand {
    fn command_name(&self) -> String {
        format!("task:{}", self.name)
    }

    fn usage(&self) -> String {
        format!(
            "usage: {} --prompt <task> --description <short label>",
            self.command_name()
        )
    }

    /// The agent for a session in `dir`, or the output saying why there is none.
    fn find(&self, dir: &Path) -> Result<CustomAgent, CommandOutput> {
        match self.catalog.agent(dir, &self.name) {
            Lookup::Found(agent) => Ok(agent),
            Lookup::Held(why) => Err(CommandOutput::failure(
                format!("{}: not available: {why}", self.command_name()),
                EXIT_NO_AGENT,
            )),
            Lookup::Missing => {
                let set = self.catalog.load(dir);
                let known: Vec<String> = set
                    .agents
                    .iter()
                    .map(|a| format!("task:{}", a.name))
                    .collect();
                let known = if known.is_empty() {
                    "there are none here".to_string()
                } else {
                    format!("there are: {}", known.join(", "))
                };
                Err(CommandOutput::failure(
                    format!(
                        "{}: command not found: no custom agent is named `{}` ({known}; an agent \
                         is a file agents/<name>.md in .claude/ or .synapse/ of the project, \
                         ~/.claude/ or $SYNAPSE_HOME/). The built-in sub-agents are \
                         task:general and task:explore.",
                        self.command_name(),
                        self.name
                    ),
                    EXIT_NO_AGENT,
                ))
            }
        }
    }
}

impl AgentCommand for CustomTaskCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Think
    }

    fn spec(&self) -> &'static CommandSpec {
        &CUSTOM_SPEC
    }

    fn help(&self, full: bool, dir: &Path) -> String {
        let agent = match self.find(dir) {
            Ok(agent) => agent,
            Err(out) => return out.text,
        };
        let mut text = format!("{}\n{}\n", self.usage(), agent.description.trim());
        if full {
            let model = agent.model.as_deref().unwrap_or("the session's");
            text.push_str(&format!(
                "\nA custom sub-agent ({} agent, {}): its own shell and context, at most \
                 {TASK_MAX_ITERATIONS} model calls.\nTools: {}\nModel: {model}\n\nExamples:\n  \
                 {} --prompt \"Review the changes in src/ and report problems\" --description \
                 \"review\"\n",
                agent.scope.as_str(),
                agent.path.display(),
                agent.tools_text(),
                self.command_name()
            ));
        }
        text
    }

    fn effect(
        &self,
        _args: &[String],
        at: &crate::shell::PathResolver<'_>,
    ) -> synapse_command::gate::Effect {
        let dir = synapse_shared::paths::normalize(&at.resolve("."));
        let read_only = match self.catalog.agent(&dir, &self.name) {
            Lookup::Found(agent) => agent.tools.as_ref().is_some_and(|t| t.read_only()),
            // Nothing will run; asked about as any sub-agent.
            _ => false,
        };
        synapse_command::gate::Effect::SubAgent { read_only }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let name = self.command_name();
            let (prompt, description) = match parse_task_words(args) {
                Ok(words) => words,
                Err(problem) => {
                    return CommandOutput::failure(
                        format!(
                            "{name}: {problem}\n{}\nrun `{name} --help` for details",
                            self.usage()
                        ),
                        EXIT_USAGE,
                    );
                }
            };
            let dir = ctx.workspace().unwrap_or(ctx.cwd()).to_path_buf();
            let agent = match self.find(&dir) {
                Ok(agent) => agent,
                Err(out) => return out,
            };
            let read_only = agent.tools.as_ref().is_some_and(|t| t.read_only());
            let tools = agent.tools.clone();
            let keep = move |command: &str| {
                tools
                    .as_ref()
                    .is_none_or(|t| t.has_command(command).unwrap_or(true))
            };
            let doc = self.subagents.commands_doc_where(&keep);
            let rules = if read_only {
                "\n\nYour tools are read-only: do not create, change or delete anything."
            } else {
                ""
            };
            let request = SubAgentRequest {
                system: format!(
                    "{}\n\n# How you work\n\n{SUBAGENT_NOTE}{rules}\n\n{doc}\n\n# Environment\n\n\
                     - Working directory: {}\n",
                    agent.prompt,
                    ctx.cwd().display()
                ),
                prompt,
                cwd: ctx.cwd().to_path_buf(),
                env: ctx.env_map(),
                caller: Some(ctx.session_name().to_string()),
                policy: match &agent.tools {
                    None => SubAgentPolicy::General,
                    Some(grant) => SubAgentPolicy::Tools(grant.clone()),
                },
                limits: RunnerLimits {
                    max_iterations: TASK_MAX_ITERATIONS,
                    ..RunnerLimits::default()
                },
                workspace: ctx.part::<crate::workspace::WorkspaceBinding>().cloned(),
                gate: if read_only {
                    ctx.gate().and_then(|g| g.0.read_only())
                } else {
                    ctx.gate().cloned()
                },
                sandbox: if read_only {
                    Some(synapse_sandbox::SandboxSpec {
                        writable: Vec::new(),
                        read_only: true,
                        protected: Vec::new(),
                    })
                } else {
                    ctx.sandbox().cloned()
                },
                context: None,
                model: explicit_model(agent.model.as_deref()),
            };
            let cancel = ctx.cancel().clone();
            task_output(
                &name,
                &description,
                self.subagents.run(request, &cancel).await,
            )
        })
    }
}
