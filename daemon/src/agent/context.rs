//! Keeping a conversation inside the model's window. When the last call used more than
//! `COMPACT_THRESHOLD` of the window (or the user asks with `/compact`): first, large tool results
//! older than the last few messages are moved to files under the session folder (the message keeps
//! the path and a head, and `read <path>` brings the rest back); then, if that is not enough or
//! compaction was forced, older history is summarised by the model and replaced by the summary,
//! keeping the latest messages as they are.

use std::path::{Path, PathBuf};

use futures::StreamExt;

use synapse_llm::{ContentBlock, LlmEvent, LlmProvider, LlmRequest, Message, Role};

/// Fraction of the window above which compaction starts.
pub const COMPACT_THRESHOLD: f64 = 0.75;
/// Tool results longer than this are offloaded when old.
pub const OFFLOAD_MIN_CHARS: usize = 2_000;
/// Characters of an offloaded result kept inline.
pub const OFFLOAD_HEAD_CHARS: usize = 400;
/// Messages at the end never offloaded or summarised.
pub const KEEP_RECENT_MESSAGES: usize = 2;
/// Messages kept verbatim after a summary.
pub const KEEP_AFTER_SUMMARY: usize = 6;

const SUMMARY_PROMPT: &str = "Summarise the conversation so far for your own later use. Keep: the \
user's goals and constraints, decisions made, files created or changed (with paths), commands \
that worked, open problems and next steps. Be concise and factual; use bullet points.";

/// True when the last call's context size calls for compaction.
pub fn needs_compaction(context_tokens: u64, window: u64) -> bool {
    window > 0 && context_tokens as f64 > window as f64 * COMPACT_THRESHOLD
}

/// Rough token estimate of a history (4 characters per token; an image as
/// [`synapse_llm::IMAGE_TOKENS_ESTIMATE`], not by its base64 size).
pub fn estimate_tokens(history: &[Message]) -> u64 {
    let chars: usize = history
        .iter()
        .flat_map(|m| m.content.iter())
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            ContentBlock::ToolUse { input, .. } => input.to_string().len(),
            ContentBlock::ToolResult {
                content, images, ..
            } => content.len() + images.len() * synapse_llm::IMAGE_TOKENS_ESTIMATE * 4,
        })
        .sum();
    (chars / 4) as u64
}

/// Moves large old tool results into `dir`; returns how many were offloaded.
pub fn offload_tool_results(history: &mut [Message], dir: &Path) -> std::io::Result<usize> {
    offload_tool_results_keeping(history, dir, KEEP_RECENT_MESSAGES)
}

/// Like [`offload_tool_results`], keeping the last `keep_recent` messages as they are; after the
/// server rejected a request as too long, nothing is kept (the culprit is usually the newest).
pub fn offload_tool_results_keeping(
    history: &mut [Message],
    dir: &Path,
    keep_recent: usize,
) -> std::io::Result<usize> {
    let old = history.len().saturating_sub(keep_recent);
    let mut count = 0;
    for message in &mut history[..old] {
        for block in &mut message.content {
            let ContentBlock::ToolResult {
                tool_use_id,
                content,
                images,
                ..
            } = block
            else {
                continue;
            };
            // Old images leave the context; the files they came from are named in the text.
            if !images.is_empty() {
                content.push_str(&format!(
                    "\n[{} image(s) no longer shown: the context was compacted]",
                    images.len()
                ));
                images.clear();
                count += 1;
            }
            if content.len() < OFFLOAD_MIN_CHARS || content.starts_with("[output offloaded") {
                continue;
            }
            std::fs::create_dir_all(dir)?;
            let safe: String = tool_use_id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let path: PathBuf = dir.join(format!("{safe}.txt"));
            synapse_shared::atomic::write_atomic(&path, content.as_bytes())?;
            let head: String = content.chars().take(OFFLOAD_HEAD_CHARS).collect();
            *content = format!(
                "[output offloaded: {} chars saved to {}; run `read {}` to see it all]\n{head}\n…",
                content.len(),
                path.display(),
                path.display()
            );
            count += 1;
        }
    }
    Ok(count)
}

/// Where the summary cut goes: the start of a user prompt (not a tool result), so no tool call
/// is separated from its result.
pub fn summary_cut(history: &[Message]) -> Option<usize> {
    let latest = history.len().saturating_sub(KEEP_AFTER_SUMMARY);
    (1..=latest).rev().find(|&i| {
        let m = &history[i];
        m.role == Role::User
            && !m
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
    })
}

/// Asks the model for a summary of `older` (no tools offered).
pub async fn summarize(
    provider: &dyn LlmProvider,
    model: &str,
    system: &str,
    older: &[Message],
) -> Result<String, super::AgentError> {
    let mut messages = super::history::normalized(older);
    messages.push(Message::user_text(SUMMARY_PROMPT));
    let messages = super::history::normalized(&messages);
    let request = LlmRequest {
        model: model.to_string(),
        system: system.to_string(),
        messages,
        tools: Vec::new(),
        max_tokens: 4096,
    };
    let mut stream = provider.stream(request)?;
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        match item? {
            LlmEvent::TextDelta(t) => text.push_str(&t),
            LlmEvent::Done { .. } => break,
            _ => {}
        }
    }
    if text.trim().is_empty() {
        return Err(super::AgentError::EmptySummary);
    }
    Ok(text)
}

/// The history after a summary: the summary as one user message, then the kept messages.
pub fn replace_with_summary(history: &[Message], cut: usize, summary: &str) -> Vec<Message> {
    let mut out = vec![
        Message::user_text(format!(
            "[Summary of the earlier conversation, written when the context was compacted]\n{summary}"
        )),
        Message::assistant_text("Understood; I will continue from this summary."),
    ];
    out.extend_from_slice(&history[cut..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_llm::ToolResult;

    #[test]
    fn old_large_results_are_offloaded_and_stay_readable() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(5000);
        let mut history = vec![
            Message::user_text("go"),
            Message::tool_results([ToolResult {
                tool_use_id: "t/1".into(),
                content: big.clone(),
                is_error: false,
                images: Vec::new(),
            }]),
            Message::assistant_text("a"),
            Message::user_text("b"),
        ];
        assert_eq!(offload_tool_results(&mut history, dir.path()).unwrap(), 1);
        let saved = std::fs::read_to_string(dir.path().join("t_1.txt")).unwrap();
        assert_eq!(saved, big);
        let ContentBlock::ToolResult { content, .. } = &history[1].content[0] else {
            panic!()
        };
        assert!(
            content.starts_with("[output offloaded: 5000 chars saved to "),
            "{content}"
        );
        assert!(content.len() < 1000);
    }

    #[test]
    fn the_cut_never_splits_a_call_from_its_result() {
        let mut history = vec![Message::user_text("first")];
        for i in 0..10 {
            history.push(Message::assistant_text(format!("a{i}")));
            history.push(Message::tool_results([ToolResult {
                tool_use_id: format!("t{i}"),
                content: "r".into(),
                is_error: false,
                images: Vec::new(),
            }]));
        }
        history.push(Message::user_text("second"));
        history.push(Message::assistant_text("done"));
        let cut = summary_cut(&history);
        assert_eq!(
            cut, None,
            "only tool results in the window: nothing safe to cut"
        );
        history.extend([Message::user_text("third"), Message::assistant_text("x")]);
        for _ in 0..6 {
            history.push(Message::assistant_text("y"));
        }
        let cut = summary_cut(&history).unwrap();
        assert_eq!(history[cut].text(), "third");
        let compacted = replace_with_summary(&history, cut, "S");
        assert!(compacted[0].text().contains("S"));
        assert_eq!(compacted.last(), history.last());
    }

    #[test]
    fn threshold() {
        assert!(needs_compaction(160_000, 200_000));
        assert!(!needs_compaction(100_000, 200_000));
    }
}
