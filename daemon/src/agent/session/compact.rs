//! The [`Compactor`]: keeps one chat session's conversation inside the model's window (see
//! [`crate::agent::context`] for the steps). The session builds one per turn (and per
//! `/compact`) and hands it to the runner, which asks it before every model request: the first
//! of a turn, each one between tool calls, and the first of a resumed session (sized from the
//! history while the server has reported nothing). Past `COMPACT_THRESHOLD` of the window it
//! offloads old large tool results and, if that is not enough, summarises older turns; the
//! latest messages stay as they are and no tool call is separated from its result. It also runs
//! on `/compact` and after the server rejected a request as too long (then even the newest tool
//! results are offloaded). The new history is recorded in the session file and subscribers get
//! a notice.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;

use super::SessionEvent;
use crate::agent::AgentEvent;
use crate::agent::context::{self, ContextMark};
use crate::agent::runner::ContextKeeper;
use crate::agent::session_log::SessionLog;
use synapse_llm::{LlmProvider, Message, ModelLimits, Usage};

/// Why a compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// The next request would pass the threshold: the latest messages stay verbatim.
    Threshold,
    /// The user asked (`/compact`): even the newest large results are offloaded, and older
    /// turns summarised.
    Forced,
    /// The server rejected the request as too long: everything large goes, and older turns are
    /// summarised when that is not enough.
    Overflow,
}

/// Compacts one session's history; see the module doc.
pub(super) struct Compactor {
    session: String,
    provider: Arc<dyn LlmProvider>,
    /// The system prompt the turn sends (it counts against the window).
    system: String,
    window: u64,
    summary_max_tokens: u32,
    session_file: PathBuf,
    events: crate::agent::room::SessionRoom,
    /// What the server last reported, for which prefix of the history.
    mark: Mutex<Option<ContextMark>>,
    /// The session's hooks: `PreCompact` before, `SessionStart` (`compact`) after a compaction.
    hooks: Option<Arc<crate::hooks::SessionHooks>>,
}

impl Compactor {
    /// `mark` is what the session knew from its previous turn (`None` for a resumed session).
    pub(super) fn new(
        session: &str,
        provider: Arc<dyn LlmProvider>,
        system: String,
        limits: &ModelLimits,
        session_file: &Path,
        events: crate::agent::room::SessionRoom,
        mark: Option<ContextMark>,
    ) -> Self {
        Self {
            session: session.to_string(),
            provider,
            system,
            window: limits.context_window,
            summary_max_tokens: context::summary_max_tokens(limits.max_output_tokens),
            session_file: session_file.to_path_buf(),
            events,
            mark: Mutex::new(mark),
            hooks: None,
        }
    }

    /// Fires the session's `PreCompact` hooks before each compaction.
    pub(super) fn with_hooks(mut self, hooks: Option<Arc<crate::hooks::SessionHooks>>) -> Self {
        self.hooks = hooks;
        self
    }

    /// The last report of the server, kept by the session for its next turn.
    pub(super) fn mark(&self) -> Option<ContextMark> {
        *self.mark.lock()
    }

    /// The context the next request would take, in tokens.
    pub(super) fn context_tokens(&self, history: &[Message]) -> u64 {
        context::context_tokens(&self.system, history, self.mark())
    }

    /// Offloads and, if needed or forced, summarises; records the new history in the session
    /// file. Returns the notice for subscribers (`None`: nothing changed and nobody asked).
    pub(super) async fn compact(
        &self,
        history: &mut Vec<Message>,
        trigger: Trigger,
    ) -> Option<SessionEvent> {
        let keep_recent = match trigger {
            Trigger::Threshold => context::KEEP_RECENT_MESSAGES,
            Trigger::Forced | Trigger::Overflow => 0,
        };
        if let Some(hooks) = &self.hooks {
            let word = match trigger {
                Trigger::Forced => "manual",
                Trigger::Threshold | Trigger::Overflow => "auto",
            };
            hooks.pre_compact(word).await;
        }
        let dir = self.session_file.with_extension("").join("tool-results");
        let offloaded = match context::offload_tool_results_keeping(history, &dir, keep_recent) {
            Ok(n) => n,
            Err(e) => {
                let _ = self.events.send(SessionEvent::Error(format!(
                    "cannot offload tool results to {}: {e}",
                    dir.display()
                )));
                0
            }
        };
        let window_limit = (self.window as f64 * context::COMPACT_THRESHOLD) as u64;
        // Offloading freed nothing although the context is over the line (or the server said
        // so): only a summary can help.
        let summarise = trigger == Trigger::Forced
            || offloaded == 0
            || context::estimate_request_tokens(&self.system, history) > window_limit;
        let mut summarised = 0;
        if summarise && let Some(cut) = context::summary_cut(history) {
            match context::summarize(
                self.provider.as_ref(),
                self.provider.model(),
                context::SUMMARY_SYSTEM,
                &history[..cut],
                self.summary_max_tokens,
                self.window,
            )
            .await
            {
                Ok(summary) => {
                    *history = context::replace_with_summary(history, cut, &summary);
                    summarised = cut;
                }
                Err(e) => {
                    let _ = self
                        .events
                        .send(SessionEvent::Error(format!("cannot summarise: {e}")));
                }
            }
        }
        if offloaded == 0 && summarised == 0 {
            return (trigger == Trigger::Forced).then(|| {
                SessionEvent::Agent(AgentEvent::Notice("Nothing to compact yet.".into()))
            });
        }
        let record = serde_json::json!({ "messages": history });
        if let Err(e) = SessionLog::open(&self.session_file)
            .and_then(|mut log| log.append("compaction", &record))
        {
            let _ = self.events.send(SessionEvent::Error(e.to_string()));
        }
        // The report described the old history; until the next answer, the estimate counts.
        *self.mark.lock() = None;
        tracing::info!(
            session = %self.session,
            ?trigger,
            offloaded,
            summarised,
            tokens_after = context::estimate_request_tokens(&self.system, history),
            window = self.window,
            "context compacted"
        );
        // Claude Code starts the compacted conversation anew: SessionStart (`compact`), whose
        // output goes with the next prompt.
        if let Some(hooks) = &self.hooks {
            hooks.session_start("compact").await;
        }
        Some(SessionEvent::Agent(AgentEvent::Notice(format!(
            "Context compacted: {offloaded} large tool result(s) moved to {}, {summarised} earlier message(s) summarised.",
            dir.display()
        ))))
    }
}

impl ContextKeeper for Compactor {
    fn before_request<'a>(&'a self, history: &'a mut Vec<Message>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let tokens = self.context_tokens(history);
            if !context::needs_compaction(tokens, self.window) {
                return;
            }
            if let Some(notice) = self.compact(history, Trigger::Threshold).await {
                let _ = self.events.send(notice);
            }
        })
    }

    fn reported(&self, usage: Usage, messages: usize) {
        *self.mark.lock() = ContextMark::reported(usage, messages);
    }
}
