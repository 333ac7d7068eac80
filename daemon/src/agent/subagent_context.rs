//! A sub-agent's memory between runs: the history one skill sub-agent keeps for one chat session,
//! so its second search or enhancement sees what it did before.
//!
//! [`SubAgentContexts`] maps a chat session id to its [`SubAgentContext`] by a weak reference:
//! the chat session holds the only strong one (in its `SessionDeps`), so the context is dropped
//! the moment the session is unloaded or closed, and a shell session that is not a live chat
//! (an `Exec` call, a CLI request) finds none and runs a one-off sub-agent.
//!
//! Runs on one context are serialized: a run holds the context's lock from its first model call
//! to its last message; runs of different sessions share nothing and go in parallel.
//!
//! The kept history is bounded ([`remember`]): every block of a run longer than
//! [`KEPT_BLOCK_CHARS`] is cut to its head and tail (an enhancement prompt carries up to
//! `maxEnhanceContextChars` of conversation, which the next enhancement reads again from the
//! session file anyway), then the oldest whole exchanges (a prompt and everything up to the
//! next prompt) are dropped while the history is over [`CONTEXT_BUDGET_TOKENS`] or holds more
//! than [`MAX_EXCHANGES`]. A run that got no answer at all (no model, cancelled before the
//! first reply) leaves nothing behind.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use tokio_util::sync::CancellationToken;

use super::context::estimate_tokens;
use synapse_llm::{ContentBlock, Message, Role};

/// Estimated tokens of history a context keeps between runs.
pub const CONTEXT_BUDGET_TOKENS: u64 = 8_000;
/// Exchanges (runs) a context keeps at most.
pub const MAX_EXCHANGES: usize = 10;
/// Characters of one block (text, tool input, tool result) kept in the memory.
pub const KEPT_BLOCK_CHARS: usize = 4_000;

/// One sub-agent's history, used by one run at a time.
#[derive(Default)]
pub struct SubAgentContext {
    history: tokio::sync::Mutex<Vec<Message>>,
}

impl SubAgentContext {
    /// Waits for the context (another run of the same session may hold it); `None` when
    /// cancelled first.
    pub async fn lock(
        &self,
        cancel: &CancellationToken,
    ) -> Option<tokio::sync::MutexGuard<'_, Vec<Message>>> {
        tokio::select! {
            guard = self.history.lock() => Some(guard),
            _ = cancel.cancelled() => None,
        }
    }
}

/// How one run uses a context: the context, and what the memory keeps of the run's prompt.
pub struct RunMemory {
    pub context: Arc<SubAgentContext>,
    /// Kept in place of the prompt's text (an enhancement's prompt carries a transcript the next
    /// enhancement brings again; its memory needs only what was asked). `None`: the prompt.
    pub prompt_kept_as: Option<String>,
}

impl RunMemory {
    /// The run's prompt is remembered as it was.
    pub fn new(context: Arc<SubAgentContext>) -> Self {
        Self {
            context,
            prompt_kept_as: None,
        }
    }
}

/// Replaces the text of the prompt at `history[start]` (a run's first message) by `note`.
pub fn keep_prompt_as(history: &mut [Message], start: usize, note: &str) {
    if let Some(prompt) = history.get_mut(start)
        && prompt.role == Role::User
    {
        prompt
            .content
            .retain(|b| !matches!(b, ContentBlock::Text { .. }));
        prompt.content.insert(
            0,
            ContentBlock::Text {
                text: note.to_string(),
            },
        );
    }
}

/// The contexts of the live chat sessions, by session id.
#[derive(Default)]
pub struct SubAgentContexts {
    live: Mutex<HashMap<String, Weak<SubAgentContext>>>,
}

impl SubAgentContexts {
    /// The context of session `id`, created when it has none. The caller (the chat session)
    /// keeps it alive; dropping the last strong reference forgets it.
    pub fn open(&self, id: &str) -> Arc<SubAgentContext> {
        let mut live = self.live.lock();
        live.retain(|_, weak| weak.strong_count() > 0);
        if let Some(existing) = live.get(id).and_then(Weak::upgrade) {
            return existing;
        }
        let context = Arc::new(SubAgentContext::default());
        live.insert(id.to_string(), Arc::downgrade(&context));
        context
    }

    /// The context of a live chat session, if `id` names one.
    pub fn get(&self, id: &str) -> Option<Arc<SubAgentContext>> {
        self.live.lock().get(id).and_then(Weak::upgrade)
    }

    /// Contexts still alive.
    pub fn live_count(&self) -> usize {
        self.live
            .lock()
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

/// Keeps what the run that started at `history[start]` added, within the budget.
pub fn remember(history: &mut Vec<Message>, start: usize) {
    let start = start.min(history.len());
    if !history[start..].iter().any(|m| m.role == Role::Assistant) {
        history.truncate(start);
        return;
    }
    for message in &mut history[start..] {
        message.content.iter_mut().for_each(condense_block);
    }
    loop {
        let starts: Vec<usize> = (0..history.len())
            .filter(|&i| starts_exchange(&history[i]))
            .collect();
        let over = estimate_tokens(history) > CONTEXT_BUDGET_TOKENS || starts.len() > MAX_EXCHANGES;
        // The newest exchange always stays: it is what the next run most needs.
        match starts.get(1) {
            Some(&second) if over => {
                history.drain(..second);
            }
            _ => break,
        }
    }
}

/// A user message with text (a prompt), as opposed to one carrying tool results.
fn starts_exchange(m: &Message) -> bool {
    m.role == Role::User
        && m.content
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { .. }))
}

fn condense_block(block: &mut ContentBlock) {
    match block {
        ContentBlock::Text { text } => condense(text),
        ContentBlock::ToolResult { content, .. } => condense(content),
        ContentBlock::ToolUse { input, .. } => {
            if let Some(serde_json::Value::String(command)) = input.get_mut("command") {
                condense(command);
            }
        }
    }
}

/// Cuts `text` to its head and tail when longer than [`KEPT_BLOCK_CHARS`].
fn condense(text: &mut String) {
    let total = text.chars().count();
    if total <= KEPT_BLOCK_CHARS {
        return;
    }
    let head = KEPT_BLOCK_CHARS * 3 / 4;
    let tail = KEPT_BLOCK_CHARS - head;
    let dropped = total - head - tail;
    let first: String = text.chars().take(head).collect();
    let last: String = text.chars().skip(total - tail).collect();
    *text =
        format!("{first}\n[… {dropped} characters not kept in the sub-agent's memory …]\n{last}");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn exchange(prompt: &str, answer: &str) -> Vec<Message> {
        vec![Message::user_text(prompt), Message::assistant_text(answer)]
    }

    #[test]
    fn a_context_lives_as_long_as_its_session_holds_it() {
        let contexts = SubAgentContexts::default();
        let held = contexts.open("s1");
        assert!(Arc::ptr_eq(&held, &contexts.open("s1")));
        assert!(contexts.get("s1").is_some());
        assert!(contexts.get("s2").is_none());
        drop(held);
        assert!(contexts.get("s1").is_none());
        assert_eq!(contexts.live_count(), 0);
    }

    #[test]
    fn a_prompt_can_be_remembered_as_a_note() {
        let mut history = exchange("first", "done");
        history.extend(exchange(&"transcript ".repeat(500), "report"));
        keep_prompt_as(&mut history, 2, "an enhancement was asked");
        remember(&mut history, 2);
        assert_eq!(history[2].text(), "an enhancement was asked");
        assert_eq!(history[3].text(), "report");
        assert_eq!(history[0].text(), "first");
    }

    #[test]
    fn a_run_without_an_answer_leaves_nothing() {
        let mut history = exchange("first", "done");
        history.push(Message::user_text("second"));
        remember(&mut history, 2);
        assert_eq!(history, exchange("first", "done"));
    }

    #[test]
    fn long_blocks_are_cut_and_old_exchanges_dropped() {
        let mut history = Vec::new();
        for i in 0..(MAX_EXCHANGES + 3) {
            let start = history.len();
            history.extend(exchange(&format!("prompt {i}"), "ok"));
            remember(&mut history, start);
        }
        assert_eq!(history.len(), MAX_EXCHANGES * 2);
        assert_eq!(history[0].text(), "prompt 3");

        let start = history.len();
        history.extend(exchange(&"x".repeat(100_000), "big"));
        remember(&mut history, start);
        let last_prompt = history[history.len() - 2].text();
        assert!(last_prompt.chars().count() < KEPT_BLOCK_CHARS + 100);
        assert!(last_prompt.contains("characters not kept"));
        assert!(estimate_tokens(&history) <= CONTEXT_BUDGET_TOKENS);
        assert_eq!(history.last().unwrap().text(), "big");
    }

    #[tokio::test]
    async fn runs_of_one_context_wait_for_each_other() {
        let context = Arc::new(SubAgentContext::default());
        let cancel = CancellationToken::new();
        let held = context.lock(&cancel).await.unwrap();
        let waiting = CancellationToken::new();
        let (c, w) = (context.clone(), waiting.clone());
        let second = tokio::spawn(async move { c.lock(&w).await.is_some() });
        tokio::task::yield_now().await;
        assert!(!second.is_finished());
        waiting.cancel();
        assert!(!second.await.unwrap());
        drop(held);
        assert!(context.lock(&cancel).await.is_some());
    }
}
