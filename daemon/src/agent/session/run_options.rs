//! What a `synapse run` client sets for its own turns: a replacement for the prompt's role
//! (`--system-prompt`), text appended to the prompt (`--append-system-prompt`), a budget of
//! model requests over all its turns (`--max-turns`), whether the model gets its tool at all
//! (`--disallowedTools Bash`) and the models to fall back to (`--fallback-model`). Set when the
//! client attaches and reset by the next one, so a REPL that reattaches later gets Synapse's own
//! prompt and tool again.

use parking_lot::Mutex;

use crate::agent::events::TurnEnd;

/// A client's choices for its turns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// Replaces the role paragraph; the tool's documentation stays.
    pub system_prompt: Option<String>,
    /// Added at the end of the system prompt.
    pub append_system_prompt: Option<String>,
    /// Model requests the client's turns may make in all.
    pub max_turns: Option<u32>,
    /// `--disallowedTools Bash`: the request carries no tool and the prompt no documentation
    /// of it (the model answers in text).
    pub no_tool: bool,
    /// `--fallback-model`: tried in order when the main model is overloaded or unavailable.
    pub fallback_models: Vec<String>,
    /// `--settings`: laid over settings.json for the model configuration.
    pub settings: crate::agent::flag_settings::FlagSettings,
}

/// The attached client's options in force and the requests made under them.
#[derive(Debug, Default)]
pub(super) struct RunBudget(Mutex<RunState>);

#[derive(Debug, Default)]
struct RunState {
    options: RunOptions,
    requests: u32,
}

impl RunBudget {
    /// Applies an attaching client's options (and starts its request count at zero).
    pub(super) fn configure(&self, options: RunOptions) {
        *self.0.lock() = RunState {
            options,
            requests: 0,
        };
    }

    /// The turn's system prompt with the client's role and appended text.
    pub(super) fn prompt(&self, rendered: String) -> String {
        let run = self.0.lock();
        let role = run.options.system_prompt.as_deref();
        let mut prompt = match (run.options.no_tool, role) {
            (true, role) => crate::agent::prompt::without_tool(&rendered, role),
            (false, Some(role)) => crate::agent::prompt::with_role(&rendered, role),
            (false, None) => rendered,
        };
        if let Some(extra) = &run.options.append_system_prompt {
            prompt.push_str("\n\n");
            prompt.push_str(extra.trim_end());
        }
        prompt
    }

    /// The tools of the client's requests: `Bash`, or none after `--disallowedTools Bash`.
    pub(super) fn tools(&self) -> Vec<synapse_llm::ToolDefinition> {
        if self.0.lock().options.no_tool {
            Vec::new()
        } else {
            vec![synapse_llm::bash_tool()]
        }
    }

    /// `base` with the client's `--settings` laid over it.
    pub(super) fn settings(
        &self,
        base: synapse_shared::settings::Settings,
    ) -> synapse_shared::settings::Settings {
        self.0.lock().options.settings.layer(base)
    }

    /// `--fallback-model`'s models, in order.
    pub(super) fn fallback_models(&self) -> Vec<String> {
        self.0.lock().options.fallback_models.clone()
    }

    /// Requests the client's turns may still make (`None`: no `--max-turns`).
    pub(super) fn requests_left(&self) -> Option<u32> {
        let run = self.0.lock();
        run.options
            .max_turns
            .map(|limit| limit.saturating_sub(run.requests))
    }

    /// Counts a turn's requests; a turn stopped by the budget reports the client's whole limit.
    pub(super) fn spend(&self, requests: u32, end: &mut TurnEnd) {
        let mut run = self.0.lock();
        run.requests = run.requests.saturating_add(requests);
        if let (TurnEnd::MaxTurns(n), Some(limit)) = (end, run.options.max_turns) {
            *n = limit;
        }
    }
}
