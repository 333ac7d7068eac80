//! A chat session's system prompt is rendered at the start of each turn, because parts of it
//! depend on the turn: the skills ranked against what the user just asked, the MCP servers
//! connected by now, the repository's state. It is rendered once per turn and kept byte for byte
//! until the turn ends (every request of the turn, its compaction and its retry send the same
//! text), so a provider's prompt cache still holds within the turn.
//!
//! [`TurnPrompt`] is what a session is given; [`FixedPrompt`] is a prompt that never changes
//! (tests, tools); the daemon's is [`super::main_prompt::MainPrompt`].

use std::sync::Arc;

use synapse_llm::Message;

/// What the turn that starts tells the prompt.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptTurn<'a> {
    /// The message the turn starts with (empty when a turn continues, or for `/compact`).
    pub now: &'a str,
    /// The conversation's earlier user messages, newest first (a few).
    pub earlier: &'a [String],
}

/// Renders a session's system prompt for a turn.
pub trait TurnPrompt: Send + Sync {
    /// The prompt for `turn`. May block briefly (it runs on a blocking thread).
    fn render(&self, turn: &PromptTurn<'_>) -> String;
}

/// A prompt that is the same for every turn.
pub struct FixedPrompt(pub String);

impl TurnPrompt for FixedPrompt {
    fn render(&self, _: &PromptTurn<'_>) -> String {
        self.0.clone()
    }
}

/// Earlier user messages that rank the skills besides the new one.
pub const EARLIER_MESSAGES: usize = 3;
/// Characters kept of each earlier message.
const EARLIER_MESSAGE_MAX_CHARS: usize = 2_000;

/// The last [`EARLIER_MESSAGES`] messages the user typed in `history`, newest first.
pub fn earlier_user_texts(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .rev()
        .filter(|m| super::session::is_user_prompt(m))
        .take(EARLIER_MESSAGES)
        .map(|m| m.text().chars().take(EARLIER_MESSAGE_MAX_CHARS).collect())
        .collect()
}

/// Renders `prompt` for the turn that starts with `now` after `history`, on a blocking thread
/// (it may read files and run git under a deadline).
pub async fn render_for_turn(
    prompt: &Arc<dyn TurnPrompt>,
    history: &[Message],
    now: &str,
) -> String {
    let earlier = earlier_user_texts(history);
    let (prompt, now) = (prompt.clone(), now.to_string());
    tokio::task::spawn_blocking(move || {
        prompt.render(&PromptTurn {
            now: &now,
            earlier: &earlier,
        })
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "rendering the system prompt failed");
        String::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_texts_are_the_users_newest_first() {
        let history = vec![
            Message::user_text("first"),
            Message::assistant_text("ok"),
            Message::user_text("<system-reminder>todo</system-reminder>"),
            Message::user_text("second"),
        ];
        assert_eq!(earlier_user_texts(&history), vec!["second", "first"]);
        assert_eq!(FixedPrompt("p".into()).render(&PromptTurn::default()), "p");
    }
}
