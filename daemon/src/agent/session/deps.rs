//! What a chat session gets from outside ([`SessionDeps`]): the shell layer, the provider factory
//! (the real HTTP providers, or a scripted fake in tests), live settings, its system prompt,
//! limits, hooks, its permission gate's environment and its workspace.

use std::sync::Arc;

use synapse_llm::{LlmProvider, ProviderConfig, build_provider};

use crate::agent::gate::GateEnv;
use crate::agent::runner::{RunnerLimits, TurnGuard};
use crate::shell::ShellSessions;

/// Builds the model provider for a configuration: [`LlmProviders`] (the real HTTP providers)
/// in the daemon, a scripted fake in unit tests.
pub trait ProviderFactory: Send + Sync {
    fn build(&self, config: &ProviderConfig)
    -> Result<Arc<dyn LlmProvider>, synapse_llm::LlmError>;
}

/// The real providers (`synapse_llm::build_provider`).
pub struct LlmProviders;

impl ProviderFactory for LlmProviders {
    fn build(
        &self,
        config: &ProviderConfig,
    ) -> Result<Arc<dyn LlmProvider>, synapse_llm::LlmError> {
        build_provider(config)
    }
}

/// Everything a turn needs that comes from outside the session.
pub struct SessionDeps {
    pub shell: Arc<ShellSessions>,
    /// Builds the model provider from the configuration in force.
    pub providers: Arc<dyn ProviderFactory>,
    pub settings: Arc<dyn Fn() -> synapse_shared::settings::Settings + Send + Sync>,
    /// Fixes the system prompt at the session's first turn and writes each turn's note.
    pub system_prompt: Arc<dyn crate::agent::turn_prompt::TurnPrompt>,
    pub limits: RunnerLimits,
    /// Asked before a turn ends (unfinished todo items bring one reminder).
    pub turn_guard: Option<Arc<dyn TurnGuard>>,
    /// Runs after a normal turn when auto-enhance is on (the skill enhancer).
    pub stop_hook: Option<Arc<dyn crate::agent::stop_hook::StopHook>>,
    /// The memory of this session's skill sub-agent: the session holds it, so it is dropped
    /// with the session (see [`crate::agent::subagent_context`]).
    pub subagent_context: Option<Arc<crate::agent::subagent_context::SubAgentContext>>,
    /// What the permission gate needs; `None` runs every command unchecked (tests).
    pub gate_env: Option<GateEnv>,
    /// The workspace (project root) the session is bound to; held while the session lives.
    pub workspace: Option<crate::workspace::WorkspaceBinding>,
    /// The user's custom slash commands, expanded when a turn's text is `/<name> args`
    /// (`None`: none, as in unit tests).
    pub custom: Option<Arc<crate::agent::custom::SessionCommands>>,
    /// The daemon's hooks (`None`: no hooks run, as in unit tests).
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
    /// What the session's user is told when it opens, from building these (its own MCP
    /// servers that did not start, or that replace a configured server of the same name).
    pub open_notices: Vec<String>,
    /// The MCP servers the session was opened with for itself (a resume that brings others
    /// loads it again with them).
    pub own_mcp: crate::agent::sessions::OwnMcpServers,
}
