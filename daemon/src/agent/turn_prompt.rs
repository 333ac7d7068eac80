//! What a chat session tells the model, split so a provider's prefix cache serves the whole
//! history on every request:
//!
//! - **The system prompt** is fixed once per session, at its first turn ([`TurnPrompt::open`]):
//!   byte-identical on every request of every turn after that, and rendered the same way for the
//!   next session of the project while nothing it states changed.
//! - **The turn's note**: what depends on the turn (the skills that fit the new message, what
//!   changed in git or among the MCP servers since the prompt was fixed) travels in the turn's
//!   own user message, after the history, as a second text block wrapped in
//!   `<system-reminder>` and marked as the environment's words, not the user's
//!   ([`SessionPrompt::turn_note`], [`turn_message`]). No note is sent when there is nothing to
//!   say. The note is part of the history from then on, so later requests repeat it byte for
//!   byte.
//!
//! The session log keeps the fixed prompt and what the model was told ([`SessionPrompt::saved`],
//! a `prompt` record), so a resumed session (`synapse run --continue`) sends the same bytes.
//!
//! [`TurnPrompt`] is what a session is given; [`FixedPrompt`] is a prompt that never changes and
//! has nothing to add per turn (tests, tools); the daemon's is
//! [`crate::assembly::main_prompt::MainPrompt`].

use std::sync::Arc;

use synapse_llm::{ContentBlock, Message, Role};

/// A session's prompt source.
pub trait TurnPrompt: Send + Sync {
    /// Renders the session's system prompt and remembers what it states. Called once per
    /// session, at its first turn; may block briefly (it runs on a blocking thread).
    fn open(&self) -> Arc<dyn SessionPrompt>;

    /// The prompt of a resumed session from what [`SessionPrompt::saved`] returned, so its
    /// system prompt stays byte-identical across `--continue`; `None` opens a new one.
    fn resume(&self, _saved: &serde_json::Value) -> Option<Arc<dyn SessionPrompt>> {
        None
    }
}

/// One session's fixed system prompt and what it says at each turn.
pub trait SessionPrompt: Send + Sync {
    /// The system prompt, the same at every call.
    fn system(&self) -> &str;
    /// The note for the turn that starts with `message` (the lines inside the reminder, each
    /// ending in a newline); empty when there is nothing to say. May block briefly.
    fn turn_note(&self, message: &str) -> String;

    /// What the session log keeps to resume this prompt (the text and what the model was told),
    /// `None` when nothing needs keeping.
    fn saved(&self) -> Option<serde_json::Value> {
        None
    }
}

/// A prompt that is the same for every turn and never adds a note.
pub struct FixedPrompt(pub String);

impl TurnPrompt for FixedPrompt {
    fn open(&self) -> Arc<dyn SessionPrompt> {
        Arc::new(FixedPrompt(self.0.clone()))
    }
}

impl SessionPrompt for FixedPrompt {
    fn system(&self) -> &str {
        &self.0
    }

    fn turn_note(&self, _: &str) -> String {
        String::new()
    }
}

/// How every turn note starts: the words are the environment's, not the user's.
const NOTE_HEAD: &str = "<system-reminder>\nSynapse's note for this turn (the environment's, \
not the user's words):\n";
const NOTE_TAIL: &str = "</system-reminder>";

/// Resumes `saved` or else opens `prompt` for a session, on a blocking thread (it may read files
/// and run git under a deadline).
pub async fn open_on_blocking_thread(
    prompt: &Arc<dyn TurnPrompt>,
    saved: Option<serde_json::Value>,
) -> Arc<dyn SessionPrompt> {
    let prompt = prompt.clone();
    tokio::task::spawn_blocking(move || {
        saved
            .and_then(|s| prompt.resume(&s))
            .unwrap_or_else(|| prompt.open())
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "rendering the system prompt failed");
        Arc::new(FixedPrompt(String::new()))
    })
}

/// The note for the turn that starts with `message`, on a blocking thread.
pub async fn note_on_blocking_thread(session: &Arc<dyn SessionPrompt>, message: &str) -> String {
    let (session, message) = (session.clone(), message.to_string());
    tokio::task::spawn_blocking(move || session.turn_note(&message))
        .await
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "rendering the turn's note failed");
            String::new()
        })
}

/// The user message a turn starts with: the user's text, then the note (when it has any) as a
/// block of its own.
pub fn turn_message(text: String, note: &str) -> Message {
    let mut message = Message::user_text(text);
    if !note.trim().is_empty() {
        message.content.push(ContentBlock::Text {
            text: format!("{NOTE_HEAD}{}\n{NOTE_TAIL}", note.trim_end_matches('\n')),
        });
    }
    message
}

/// The text of a user message without its reminder blocks: what the user typed (with any hook
/// context appended to it).
pub fn typed_text(message: &Message) -> String {
    if message.role != Role::User {
        return message.text();
    }
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.starts_with("<system-reminder>") => {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_is_a_block_of_its_own_and_only_when_it_has_content() {
        let plain = turn_message("hello".into(), "");
        assert_eq!(plain, Message::user_text("hello"));
        let noted = turn_message("fix it".into(), "Git now: branch main.\n");
        assert_eq!(noted.content.len(), 2);
        assert_eq!(
            noted.content[1],
            ContentBlock::Text {
                text: "<system-reminder>\nSynapse's note for this turn (the environment's, not \
                       the user's words):\nGit now: branch main.\n</system-reminder>"
                    .into()
            }
        );
        assert_eq!(typed_text(&noted), "fix it");
        let fixed = FixedPrompt("p".into()).open();
        assert_eq!(fixed.system(), "p");
        assert_eq!(fixed.turn_note("anything"), "");
    }
}
