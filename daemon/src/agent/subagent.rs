//! Sub-agents: an [`AgentRunner`] in silent mode with its own shell session, its own history and
//! a policy on what it may run. `task:general` / `task:explore` and the skill sub-agent use it.
//! A run starts from an empty history, or from the history of a [`SubAgentContext`] (the skill
//! sub-agent of a chat session), which it holds for the whole run and leaves what it added in.
//!
//! The policy is decided where every permission decision is, by the gate its commands pass
//! ([`crate::agent::gate::subagent_policy::PolicyGate`], in front of the gate it inherits): no
//! sub-agent may start `task:*`; a read-only one runs only what the engine's read-only mode
//! allows; a skill author writes only below its root. The OS sandbox of the request
//! ([`SubAgentRequest::sandbox`]) is what confines native commands where the system has one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use futures::future::BoxFuture;

use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::gate::subagent_policy::PolicyGate;
use super::runner::{AgentRunner, RunnerLimits, TurnOutcome};
use super::session::resolve_config;
use super::shell_executor::ShellToolExecutor;
use super::subagent_context::{RunMemory, keep_prompt_as, remember};
use crate::shell::{GateHandle, SessionOrigin, ShellSessions};
use crate::{todo, web};
use synapse_command::PromptForm;
use synapse_llm::build_provider;
use synapse_sandbox::SandboxSpec;

/// What a sub-agent may run (decided by [`PolicyGate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubAgentPolicy {
    /// Anything but `task:*`.
    General,
    /// Nothing that changes files.
    ReadOnly,
    /// `write`/`edit` and write redirects only below `root` (the user skills folder).
    SkillAuthor { root: PathBuf },
    /// A custom agent's `tools`: only the agent commands and command lines they name.
    Tools(super::custom::tools::ToolGrant),
}

/// Starts sub-agents: what `task:*` and the skill sub-agent are given when they are built.
/// [`SubAgents`] is the daemon's; in-process tests pass a fake.
pub trait SubAgentRunner: Send + Sync {
    /// Runs a sub-agent to the end of its turn.
    fn run<'a>(
        &'a self,
        request: SubAgentRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, AgentError>>;

    /// The agent shell commands a sub-agent may run, documented for its system prompt (no
    /// `task:*`).
    fn commands_doc(&self) -> String;

    /// [`SubAgentRunner::commands_doc`] for only the commands `keep` accepts (a custom agent is
    /// told about the commands its tools allow).
    fn commands_doc_where(&self, keep: &(dyn Fn(&str) -> bool + Sync)) -> String {
        let _ = keep;
        self.commands_doc()
    }

    /// [`SubAgentRunner::commands_doc`] for a read-only sub-agent (`task:explore`): only the
    /// commands that change nothing, and no `todo` (a sub-agent keeps no task list).
    fn read_only_commands_doc(&self) -> String {
        self.commands_doc()
    }
}

/// Everything needed to start sub-agents on the daemon's shell layer.
///
/// The shell layer's command registry holds the commands that start sub-agents, so the two are
/// built together (`Arc::new_cyclic` in `DaemonState::new`) and this holds the layer weakly:
/// it is there for as long as the daemon is.
#[derive(Clone)]
pub struct SubAgents {
    pub shell: Weak<ShellSessions>,
    pub settings: Arc<dyn Fn() -> synapse_shared::settings::Settings + Send + Sync>,
    /// The daemon's hooks, where a sub-agent finds its calling session's.
    pub hooks: Arc<crate::hooks::Hooks>,
}

impl SubAgentRunner for SubAgents {
    fn run<'a>(
        &'a self,
        request: SubAgentRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, AgentError>> {
        Box::pin(SubAgents::run(self, request, cancel))
    }

    fn commands_doc(&self) -> String {
        self.commands_doc_where(&|_| true)
    }

    fn commands_doc_where(&self, keep: &(dyn Fn(&str) -> bool + Sync)) -> String {
        // No sub-agent may start another (the policy refuses `task:*`): not documented either.
        self.shell
            .upgrade()
            .map(|s| {
                s.router().commands().system_prompt_section_where(|spec| {
                    !spec.name.starts_with("task:") && keep(spec.name)
                })
            })
            .unwrap_or_default()
    }

    fn read_only_commands_doc(&self) -> String {
        self.shell
            .upgrade()
            .map(|s| {
                s.router()
                    .commands()
                    .system_prompt_section_of(read_only_form)
            })
            .unwrap_or_default()
    }
}

/// How a read-only sub-agent's prompt documents `command`: the commands that change nothing,
/// no `todo` (a sub-agent keeps no task list) and no `task:*`; the web commands in one line
/// each, with their arguments (the prompt stays lean, their `--help` has the rest).
fn read_only_form(command: &dyn synapse_command::AgentCommand) -> Option<PromptForm> {
    let name = command.spec().name;
    if !command.reads_only() || name.starts_with("task:") || name == todo::command::SPEC.name {
        return None;
    }
    let web = [
        web::fetch_command::SPEC.name,
        web::search_command::SPEC.name,
    ];
    Some(if web.contains(&name) {
        PromptForm::Usage
    } else {
        command.prompt_form()
    })
}

/// One sub-agent run.
pub struct SubAgentRequest {
    pub system: String,
    pub prompt: String,
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    pub policy: SubAgentPolicy,
    pub limits: RunnerLimits,
    /// The gate its commands pass after its policy allowed them: the calling session's
    /// permission gate (a read-only view of it for `task:explore`), or the skill sub-agent's
    /// snapshot gate.
    pub gate: Option<GateHandle>,
    /// The OS sandbox of its shell.
    pub sandbox: Option<SandboxSpec>,
    /// The caller's workspace (its project's commands on the sub-agent's PATH).
    pub workspace: Option<crate::workspace::WorkspaceBinding>,
    /// History kept between runs (`None`: a one-off run from an empty history).
    pub context: Option<RunMemory>,
    /// The model to use (`None`: the one settings and the caller's environment name).
    pub model: Option<String>,
    /// The chat session whose command started it (as a simple command or anywhere in a line):
    /// that session's hooks fire, its Stop as `SubagentStop`.
    pub caller: Option<String>,
}

impl SubAgents {
    /// Runs a sub-agent to the end of its turn and closes its shell. With a context, waits
    /// for the context first (one run per context at a time).
    pub async fn run(
        &self,
        request: SubAgentRequest,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        let Some(shell) = self.shell.upgrade() else {
            return Err(AgentError::Stopping);
        };
        let config = resolve_config(&(self.settings)(), &request.env, request.model.as_deref())?;
        let provider = build_provider(&config)?;
        let mut one_off = Vec::new();
        let mut kept = match &request.context {
            Some(memory) => match memory.context.lock(cancel).await {
                Some(guard) => Some(guard),
                None => return Ok(TurnOutcome::cancelled()),
            },
            None => None,
        };
        let keeps_history = kept.is_some();
        let history = kept.as_deref_mut().unwrap_or(&mut one_off);
        let name = format!("subagent-{:08x}", fastrand::u32(..));
        let origin = SessionOrigin {
            cwd: request.cwd.clone(),
            env: request
                .env
                .iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            sandbox: request.sandbox,
            workspace: request.workspace,
            private_tmp: None,
            spare_tmp: None,
        };
        let gate = PolicyGate::handle(request.policy, request.gate, home_of(&origin));
        // Its own shell session, every command through its policy's gate; it has no user of
        // its own to ask and no client to show progress to.
        let executor = Arc::new(ShellToolExecutor {
            sessions: shell.clone(),
            name: name.clone(),
            origin,
            approver: None,
            gate: Some(gate),
            output_cap: None,
            progress: None,
            asker: None,
            editor: None,
        });
        let runner = AgentRunner {
            model: provider.model().to_string(),
            provider,
            executor,
            system: request.system,
            tools: vec![synapse_llm::bash_tool()],
            limits: request.limits,
            // Sub-agents keep no todo list of their own session; nothing to remind them of.
            guard: None,
            context: None,
            // Started by a session's command: that session's hooks, its Stop as SubagentStop.
            hooks: request
                .caller
                .as_deref()
                .and_then(|id| self.hooks.of_session(id))
                .map(|h| h.for_subagent()),
        };
        let start = history.len();
        let outcome = runner.run_silent(history, &request.prompt, cancel).await;
        if keeps_history {
            if let Some(note) = request
                .context
                .as_ref()
                .and_then(|m| m.prompt_kept_as.as_deref())
            {
                keep_prompt_as(history, start, note);
            }
            remember(history, start);
        }
        shell.close(&name).await;
        Ok(outcome)
    }
}

/// The `HOME` a sub-agent's commands see (`~` in their paths): the session's, else the daemon's.
fn home_of(origin: &SessionOrigin) -> PathBuf {
    let given = origin.env.iter().find(|(k, _)| k == "HOME");
    match given {
        Some((_, v)) => PathBuf::from(v),
        None => std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from),
    }
}
