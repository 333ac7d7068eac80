//! Keeping a conversation inside the model's window. Before every model request (between tool
//! calls too) the context is sized: the tokens the server last reported plus an estimate of what
//! was appended since, or, when nothing was reported yet (a resumed session, or just after a
//! compaction), an estimate of the whole request ([`context_tokens`]). Above `COMPACT_THRESHOLD`
//! of the window (or when the user asks with `/compact`): first, large tool results older than
//! the last few messages are moved to files under the session folder (the message keeps the path
//! and a head, and `read <path>` brings the rest back); then, if that is not enough or compaction
//! was forced, older history is summarised by the model and replaced by the summary, keeping the
//! latest messages as they are. The summary request carries tool calls and results as text, so a
//! back end that rejects tool blocks without tool definitions accepts it.

use std::path::{Path, PathBuf};

use futures::StreamExt;

use synapse_llm::{ContentBlock, LlmEvent, LlmProvider, LlmRequest, Message, Usage};

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
/// Characters per token assumed by the estimates: a little under the usual 4, so prose, code
/// and JSON-escaped output are not under-counted.
pub const CHARS_PER_TOKEN_ESTIMATE: f64 = 3.5;
/// Characters counted per message for its framing (role, block types, ids).
const MESSAGE_OVERHEAD_CHARS: usize = 64;
/// The most output a summary may ask for; a model with a smaller output limit gets its own.
pub const SUMMARY_MAX_TOKENS_CAP: u32 = 4096;

/// The summary request's system prompt: the agent's own (tool docs, skills, instructions) would
/// take a small window's room and is not needed to read a transcript.
pub const SUMMARY_SYSTEM: &str = "You summarise a conversation between a user and a coding agent \
that works in a terminal, so the agent can go on from your summary alone.";

const SUMMARY_PROMPT: &str = "Summarise the conversation so far for your own later use. Keep: the \
user's goals and constraints, decisions made, files created or changed (with paths), commands \
that worked, open problems and next steps. Be concise and factual; use bullet points.";

/// True when the last call's context size calls for compaction.
pub fn needs_compaction(context_tokens: u64, window: u64) -> bool {
    window > 0 && context_tokens as f64 > window as f64 * COMPACT_THRESHOLD
}

/// Rough token estimate of a history ([`CHARS_PER_TOKEN_ESTIMATE`] characters per token plus
/// each message's framing; an image as [`synapse_llm::IMAGE_TOKENS_ESTIMATE`], not by its base64
/// size).
pub fn estimate_tokens(history: &[Message]) -> u64 {
    let chars: usize = history.iter().map(message_chars).sum();
    chars_to_tokens(chars)
}

/// Estimate of a whole request: the system prompt, the `Bash` tool's definition and the history.
pub fn estimate_request_tokens(system: &str, history: &[Message]) -> u64 {
    chars_to_tokens(system.len() + bash_tool_chars()) + estimate_tokens(history)
}

fn message_chars(m: &Message) -> usize {
    MESSAGE_OVERHEAD_CHARS
        + m.content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => text.len(),
                ContentBlock::ToolUse { input, name, .. } => input.to_string().len() + name.len(),
                ContentBlock::ToolResult {
                    content, images, ..
                } => content.len() + images.len() * synapse_llm::IMAGE_TOKENS_ESTIMATE * 4,
            })
            .sum::<usize>()
}

fn bash_tool_chars() -> usize {
    let tool = synapse_llm::bash_tool();
    tool.name.len() + tool.description.len() + tool.input_schema.to_string().len()
}

fn chars_to_tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN_ESTIMATE).ceil() as u64
}

/// What the server reported for a prefix of the history: the tokens of the request and its
/// answer, and how many messages of the history they cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextMark {
    pub tokens: u64,
    pub messages: usize,
}

impl ContextMark {
    /// The mark of a call whose answer ends the first `messages` messages; `None` when the
    /// server reported no input tokens (then only the estimate counts).
    pub fn reported(usage: Usage, messages: usize) -> Option<Self> {
        let tokens = usage.total_input() + usage.output;
        (usage.total_input() > 0).then_some(Self { tokens, messages })
    }
}

/// The context the next request will take: the last report plus an estimate of the messages
/// appended since, never less than an estimate of the whole request (a server may count only
/// the tokens it did not cache, a proxy may report nothing; a low figure must not let the
/// context overflow). With nothing reported (a resumed session, just after a compaction) the
/// estimate alone counts.
pub fn context_tokens(system: &str, history: &[Message], mark: Option<ContextMark>) -> u64 {
    let estimate = estimate_request_tokens(system, history);
    match mark {
        Some(mark) if mark.messages <= history.len() => {
            estimate.max(mark.tokens + estimate_tokens(&history[mark.messages..]))
        }
        _ => estimate,
    }
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

/// Where the summary cut goes: the latest point before the last [`KEEP_AFTER_SUMMARY`] messages
/// where no tool call is separated from its result (every call before it answered before it, no
/// result after it without its call). That may be inside the current turn: a long turn of many
/// medium results (too small to offload) is summarised up to its latest steps.
pub fn summary_cut(history: &[Message]) -> Option<usize> {
    let latest = history.len().saturating_sub(KEEP_AFTER_SUMMARY);
    let mut open_calls = std::collections::HashSet::new();
    let mut safe = Vec::new();
    for (i, m) in history.iter().enumerate().take(latest + 1) {
        let is_result = m
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
        if i >= 1 && open_calls.is_empty() && !is_result {
            safe.push(i);
        }
        for b in &m.content {
            match b {
                ContentBlock::ToolUse { id, .. } => {
                    open_calls.insert(id.as_str());
                }
                ContentBlock::ToolResult { tool_use_id, .. } => {
                    open_calls.remove(tool_use_id.as_str());
                }
                ContentBlock::Text { .. } => {}
            }
        }
    }
    safe.pop()
}

/// The output budget of a summary: [`SUMMARY_MAX_TOKENS_CAP`], or the model's own limit when
/// that is smaller.
pub fn summary_max_tokens(model_max_output: u32) -> u32 {
    SUMMARY_MAX_TOKENS_CAP.min(model_max_output).max(1)
}

/// Asks the model for a summary of `older`, with no tools offered: tool calls and results are
/// shown as text (see [`as_transcript`]), answering at most `max_tokens`. The request stays
/// under `COMPACT_THRESHOLD` of `window` (see [`fit_transcript`]), so a history resumed on a
/// smaller model can still be summarised.
pub async fn summarize(
    provider: &dyn LlmProvider,
    model: &str,
    system: &str,
    older: &[Message],
    max_tokens: u32,
    window: u64,
) -> Result<String, super::AgentError> {
    let budget = ((window as f64 * COMPACT_THRESHOLD) as u64)
        .saturating_sub(u64::from(max_tokens))
        .saturating_sub(chars_to_tokens(system.len() + SUMMARY_PROMPT.len()));
    let mut messages = fit_transcript(as_transcript(&super::history::normalized(older)), budget);
    messages.push(Message::user_text(SUMMARY_PROMPT));
    let messages = super::history::normalized(&messages);
    let request = LlmRequest {
        model: model.to_string(),
        system: system.to_string(),
        messages,
        tools: Vec::new(),
        max_tokens,
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

/// The history with every tool call and result written as text (`[Bash call …]`, `[result …]`):
/// a request without tool definitions must not carry tool blocks (Bedrock-style back ends reject
/// it), and the summariser only needs to read what happened.
pub fn as_transcript(history: &[Message]) -> Vec<Message> {
    history
        .iter()
        .map(|m| Message {
            role: m.role,
            content: m
                .content
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { .. } => b.clone(),
                    ContentBlock::ToolUse { id, name, input } => {
                        let call = match input.get("command").and_then(|c| c.as_str()) {
                            Some(command) => command.to_string(),
                            None => input.to_string(),
                        };
                        ContentBlock::Text {
                            text: format!("[{name} call {id}]\n{call}"),
                        }
                    }
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        images,
                    } => {
                        let failed = if *is_error { ", failed" } else { "" };
                        let shown = if images.is_empty() {
                            String::new()
                        } else {
                            format!("\n[{} image(s) not shown]", images.len())
                        };
                        ContentBlock::Text {
                            text: format!("[result of {tool_use_id}{failed}]\n{content}{shown}"),
                        }
                    }
                })
                .collect(),
        })
        .collect()
}

/// Fits a transcript into `budget` tokens: the oldest messages are left out first (a note says
/// how many), and a last message still too long keeps the head of each text.
pub fn fit_transcript(mut messages: Vec<Message>, budget: u64) -> Vec<Message> {
    let mut left_out = 0;
    while messages.len() > 1 && estimate_tokens(&messages) > budget {
        messages.remove(0);
        left_out += 1;
    }
    if estimate_tokens(&messages) > budget {
        let blocks = messages
            .iter()
            .map(|m| m.content.len())
            .sum::<usize>()
            .max(1);
        let keep = (budget as f64 * CHARS_PER_TOKEN_ESTIMATE) as usize / blocks;
        for block in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
            if let ContentBlock::Text { text } = block
                && text.len() > keep
            {
                let mut cut = keep;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str("\n…[cut: too long for the model's window]");
            }
        }
    }
    if left_out > 0 {
        messages.insert(
            0,
            Message::user_text(format!(
                "[{left_out} earlier message(s) left out: they did not fit the model's window]"
            )),
        );
    }
    messages
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
    use synapse_llm::{Role, ToolResult};

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
        // One long turn: the prompt, then calls and their results.
        let mut history = vec![Message::user_text("first")];
        for i in 0..10 {
            history.push(call(&format!("t{i}"), "ls"));
            history.push(result(&format!("t{i}"), "r"));
        }
        let cut = summary_cut(&history).unwrap();
        assert!(cut <= history.len() - KEEP_AFTER_SUMMARY, "{cut}");
        assert_eq!(history[cut].role, Role::Assistant, "right before a call");
        let compacted = replace_with_summary(&history, cut, "S");
        assert!(compacted[0].text().contains("S"));
        assert_eq!(compacted.last(), history.last());
        assert_eq!(
            crate::agent::history::unanswered_count(&compacted),
            0,
            "every call kept has its result"
        );
        // A call whose result came only later is never cut from it.
        let split = vec![
            Message::user_text("go"),
            call("a", "x"),
            Message::assistant_text("still thinking"),
            result("a", "r"),
            Message::assistant_text("1"),
            Message::user_text("2"),
            Message::assistant_text("3"),
            Message::user_text("4"),
            Message::assistant_text("5"),
        ];
        assert_eq!(
            summary_cut(&split),
            Some(1),
            "before the call, never between"
        );
        // Between turns, the cut lands on a user's prompt as before.
        let mut turns = vec![];
        for i in 0..5 {
            turns.push(Message::user_text(format!("q{i}")));
            turns.push(Message::assistant_text(format!("a{i}")));
        }
        let cut = summary_cut(&turns).unwrap();
        assert_eq!(turns[cut].text(), "q2");
        assert_eq!(summary_cut(&turns[..6]), None, "too short to summarise");
    }

    fn result(id: &str, content: &str) -> Message {
        Message::tool_results([ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }])
    }

    fn call(id: &str, command: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "Bash".into(),
                input: serde_json::json!({ "command": command }),
            }],
        }
    }

    #[test]
    fn the_context_is_estimated_from_the_history_until_the_server_reports() {
        let system = "s".repeat(7_000);
        let mut history = vec![Message::user_text("go"), call("t1", "cat big")];
        history.push(result("t1", &"x".repeat(35_000)));
        // Nothing reported (a resumed session): the whole request is estimated, system prompt
        // and tool definition included.
        let estimate = context_tokens(&system, &history, None);
        assert!((12_000..14_000).contains(&estimate), "{estimate}");
        // A report covers its messages; what came after is estimated on top.
        let mark = ContextMark::reported(
            Usage {
                input: 20_000,
                output: 100,
                ..Usage::default()
            },
            2,
        );
        let with_report = context_tokens(&system, &history, mark);
        assert_eq!(with_report, 20_100 + estimate_tokens(&history[2..]));
        // A report lower than the estimate (cached tokens left out) never hides the estimate.
        let low = ContextMark::reported(
            Usage {
                input: 10,
                output: 1,
                ..Usage::default()
            },
            2,
        );
        assert_eq!(context_tokens(&system, &history, low), estimate);
        assert_eq!(ContextMark::reported(Usage::default(), 2), None);
    }

    #[test]
    fn the_summary_sees_tool_calls_and_results_as_text() {
        let history = vec![
            Message::user_text("go"),
            call("t1", "ls -la"),
            result("t1", "file-a"),
        ];
        let transcript = as_transcript(&history);
        let json = serde_json::to_string(&transcript).unwrap();
        assert!(
            !json.contains("tool_use") && !json.contains("tool_result"),
            "{json}"
        );
        assert!(json.contains("ls -la") && json.contains("file-a"), "{json}");
        assert_eq!(transcript.len(), 3);
        assert_eq!(transcript[1].role, Role::Assistant);
        assert_eq!(summary_max_tokens(1024), 1024);
        assert_eq!(summary_max_tokens(16_384), SUMMARY_MAX_TOKENS_CAP);
    }

    #[test]
    fn a_transcript_too_long_for_the_window_loses_its_oldest_messages_first() {
        let long: Vec<Message> = (0..20)
            .map(|i| Message::user_text(format!("m{i} {}", "w".repeat(5_000))))
            .collect();
        let fitted = fit_transcript(long.clone(), 4_000);
        assert!(
            estimate_tokens(&fitted) <= 4_100,
            "{}",
            estimate_tokens(&fitted)
        );
        assert!(fitted[0].text().contains("earlier message(s) left out"));
        assert_eq!(fitted.last(), long.last(), "the newest stays whole");
        let one = fit_transcript(vec![Message::user_text("é".repeat(50_000))], 1_000);
        assert!(estimate_tokens(&one) <= 1_100, "{}", estimate_tokens(&one));
        assert_eq!(
            fit_transcript(long[..2].to_vec(), 4_000),
            long[..2].to_vec()
        );
    }

    #[test]
    fn threshold() {
        assert!(needs_compaction(160_000, 200_000));
        assert!(!needs_compaction(100_000, 200_000));
    }
}
