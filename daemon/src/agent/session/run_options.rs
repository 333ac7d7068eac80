//! What a `synapse run` client sets for its own turns: a replacement for the prompt's role
//! (`--system-prompt`), text appended to the prompt (`--append-system-prompt`) and a budget of
//! model requests over all its turns (`--max-turns`). Set when the client attaches and reset by
//! the next one, so a REPL that reattaches later gets Synapse's own prompt again.

use parking_lot::Mutex;

use crate::agent::events::TurnEnd;

/// A client's choices for its turns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Replaces the role paragraph; the tool's documentation stays.
    pub system_prompt: Option<String>,
    /// Added at the end of the system prompt.
    pub append_system_prompt: Option<String>,
    /// Model requests the client's turns may make in all.
    pub max_turns: Option<u32>,
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
        let mut prompt = match &run.options.system_prompt {
            Some(role) => crate::agent::prompt::with_role(&rendered, role),
            None => rendered,
        };
        if let Some(extra) = &run.options.append_system_prompt {
            prompt.push_str("\n\n");
            prompt.push_str(extra.trim_end());
        }
        prompt
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
