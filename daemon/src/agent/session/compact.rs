//! Compaction of a chat session's conversation (see [`crate::agent::context`] for the steps):
//! run before a turn when the model's window fills up, on `/compact`, and after the server
//! rejected a request as too long (then even the newest tool results are offloaded); the new
//! history is recorded in the session file and subscribers get a notice.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::{ChatSession, Conversation, SessionEvent};
use crate::agent::AgentEvent;
use crate::agent::context;
use synapse_llm::{LlmProvider, Usage};

impl ChatSession {
    /// Offloads and, if needed or forced, summarises; records the new history in the session
    /// file and tells subscribers.
    pub(super) async fn compact(
        &self,
        conv: &mut Conversation,
        provider: &dyn LlmProvider,
        force: bool,
        window: u64,
    ) -> Option<SessionEvent> {
        // `/compact` offloads even the newest large results: a session whose last tool output
        // overflowed the window must be recoverable by hand too.
        let keep = if force {
            0
        } else {
            context::KEEP_RECENT_MESSAGES
        };
        self.compact_keeping(conv, provider, force, window, keep)
            .await
    }

    /// After the server rejected the request as too long: offloads every large tool result,
    /// the newest included, then summarises if that is not enough.
    pub(super) async fn compact_after_overflow(
        &self,
        conv: &mut Conversation,
        provider: &dyn LlmProvider,
        window: u64,
    ) -> Option<SessionEvent> {
        self.compact_keeping(conv, provider, false, window, 0).await
    }

    async fn compact_keeping(
        &self,
        conv: &mut Conversation,
        provider: &dyn LlmProvider,
        force: bool,
        window: u64,
        keep_recent: usize,
    ) -> Option<SessionEvent> {
        let used = conv.last_usage.total_input() + conv.last_usage.output;
        let overflowed = keep_recent == 0 && !force;
        if !force && !overflowed && !context::needs_compaction(used, window) {
            return None;
        }
        let dir = self.session_dir(conv).join("tool-results");
        let offloaded =
            match context::offload_tool_results_keeping(&mut conv.history, &dir, keep_recent) {
                Ok(n) => n,
                Err(e) => {
                    let _ = self.events.send(SessionEvent::Error(format!(
                        "cannot offload tool results to {}: {e}",
                        dir.display()
                    )));
                    0
                }
            };
        let window_limit = (window as f64 * context::COMPACT_THRESHOLD) as u64;
        let mut summarised = 0;
        // The server said the request is too long: when offloading freed nothing, our own
        // estimate was wrong, so summarise whatever can be.
        if (force
            || (overflowed && offloaded == 0)
            || context::estimate_tokens(&conv.history) > window_limit)
            && let Some(cut) = context::summary_cut(&conv.history)
        {
            let model = provider.model().to_string();
            match context::summarize(
                provider,
                &model,
                &self.deps.system_prompt,
                &conv.history[..cut],
            )
            .await
            {
                Ok(summary) => {
                    conv.history = context::replace_with_summary(&conv.history, cut, &summary);
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
            return force.then(|| {
                SessionEvent::Agent(AgentEvent::Notice("Nothing to compact yet.".into()))
            });
        }
        let record = serde_json::json!({ "messages": conv.history });
        if let Err(e) = conv.log.append("compaction", &record) {
            let _ = self.events.send(SessionEvent::Error(e.to_string()));
        }
        self.message_count
            .store(conv.history.len(), Ordering::Relaxed);
        conv.last_usage = Usage::default();
        Some(SessionEvent::Agent(AgentEvent::Notice(format!(
            "Context compacted: {offloaded} large tool result(s) moved to {}, {summarised} earlier message(s) summarised.",
            dir.display()
        ))))
    }

    /// `<sessions>/<id>/`: files that belong to this session (offloaded tool results).
    fn session_dir(&self, conv: &Conversation) -> PathBuf {
        conv.log.path().with_extension("")
    }
}
