//! The compact transcript the enhancer reads instead of the raw session file: who said what,
//! the commands that ran and what they printed, in reading order, with no ids, timestamps or
//! escaped JSON. Long blocks keep their head and tail; the whole keeps its newest part within a
//! character budget (`skillEnhance.maxEnhanceContextChars`).
//!
//! The session file (`$SYNAPSE_HOME/sessions/<id>.jsonl`, [`crate::agent::session_log`]) is read
//! from its end: only as many bytes as the budget can use, so a long session costs what a short
//! one does. `message` records add to the conversation, a `compaction` record replaces it with
//! the history it kept; the header and every other record are left out.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;
use synapse_llm::{ContentBlock, Message, Role};

/// Characters of one command's output kept (its head and tail).
pub const OUTPUT_KEPT_CHARS: usize = 1_500;
/// Characters of one text block or command line kept (its head and tail).
pub const TEXT_KEPT_CHARS: usize = 4_000;
/// Bytes of the session file read per character of budget: raw JSON lines carry escapes,
/// ids and outputs the transcript cuts, so they are several times longer than what is kept.
const BYTES_PER_KEPT_CHAR: u64 = 8;
/// At least this much of the session file is read (a short budget still sees a whole turn).
const MIN_READ_BYTES: u64 = 256 * 1024;
/// At most this much of the session file is read.
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// One line of a session file, as far as the transcript cares.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: serde_json::Value,
}

/// The transcript of the end of session file `path`, at most `max_chars` characters.
pub fn read_transcript(path: &Path, max_chars: usize) -> std::io::Result<String> {
    let (mut file, meta) = synapse_shared::bounded::open_regular(path)?;
    let len = meta.len();
    let want = (max_chars as u64)
        .saturating_mul(BYTES_PER_KEPT_CHAR)
        .clamp(MIN_READ_BYTES, MAX_READ_BYTES)
        .min(len);
    file.seek(SeekFrom::Start(len - want))?;
    let mut bytes = Vec::with_capacity(want as usize);
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    // Read from the middle of the file, the first line is a torn one.
    let whole = if want < len {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        &text
    };
    Ok(render(&messages_of(whole), max_chars))
}

/// The conversation the records of `lines` describe.
fn messages_of(lines: &str) -> Vec<Message> {
    let mut messages = Vec::new();
    for line in lines.lines() {
        let Ok(line) = serde_json::from_str::<Line>(line) else {
            continue;
        };
        match line.kind.as_str() {
            "message" => messages.extend(serde_json::from_value::<Message>(line.data).ok()),
            "compaction" => {
                if let Some(kept) = line
                    .data
                    .get("messages")
                    .and_then(|m| serde_json::from_value::<Vec<Message>>(m.clone()).ok())
                {
                    messages = kept;
                }
            }
            _ => {}
        }
    }
    messages
}

/// `messages` as a transcript of at most `max_chars` characters, its newest part.
pub fn render(messages: &[Message], max_chars: usize) -> String {
    let mut entries: Vec<String> = Vec::new();
    // Where each command's entry is, by its call's id: its output goes under it.
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for message in messages {
        let mut said = String::new();
        for block in &message.content {
            match block {
                ContentBlock::Text { text } if is_environment_note(text) => {}
                ContentBlock::Text { text } => {
                    if !said.is_empty() {
                        said.push('\n');
                    }
                    said.push_str(&head_and_tail(text.trim(), TEXT_KEPT_CHARS));
                }
                ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => {}
            }
        }
        if !said.trim().is_empty() {
            let who = match message.role {
                Role::User => "[user]",
                Role::Assistant => "[assistant]",
            };
            entries.push(format!("{who}\n{}", said.trim()));
        }
        for block in &message.content {
            match block {
                ContentBlock::ToolUse { id, input, .. } => {
                    let command = input
                        .get("command")
                        .and_then(|c| c.as_str())
                        .unwrap_or_default();
                    calls.insert(id, entries.len());
                    entries.push(format!("$ {}", head_and_tail(command, TEXT_KEPT_CHARS)));
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    let output = head_and_tail(content.trim_end(), OUTPUT_KEPT_CHARS);
                    let output = if output.is_empty() {
                        "(no output)".to_string()
                    } else {
                        output
                    };
                    match calls
                        .get(tool_use_id.as_str())
                        .and_then(|&i| entries.get_mut(i))
                    {
                        Some(command) => {
                            command.push('\n');
                            command.push_str(&output);
                        }
                        None => entries.push(output),
                    }
                }
                ContentBlock::Text { .. } => {}
            }
        }
    }
    newest_within(&entries, max_chars)
}

/// A text block the environment added to a user message (reminders, not the user's words).
fn is_environment_note(text: &str) -> bool {
    text.trim_start().starts_with("<system-reminder>")
}

/// The last entries that fit in `max_chars` (the oldest one kept may lose its head), joined by
/// blank lines; a note says when earlier ones were left out.
fn newest_within(entries: &[String], max_chars: usize) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0usize;
    let mut cut = false;
    for entry in entries.iter().rev() {
        let size = entry.chars().count() + 2;
        if used + size <= max_chars {
            used += size;
            kept.push(entry.clone());
            continue;
        }
        let room = max_chars.saturating_sub(used + 2);
        if room > 0 {
            let skip = entry.chars().count() - room;
            kept.push(entry.chars().skip(skip).collect());
        }
        cut = true;
        break;
    }
    kept.reverse();
    let body = kept.join("\n\n");
    if cut {
        format!("[… the conversation's beginning is not shown …]\n{body}")
    } else {
        body
    }
}

/// `text` when it has at most `max` characters, else its head and tail around a marker.
pub fn head_and_tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let head = max * 2 / 3;
    let tail = max - head;
    let first: String = text.chars().take(head).collect();
    let last: String = text.chars().skip(total - tail).collect();
    format!(
        "{first}\n[… {} characters cut …]\n{last}",
        total - head - tail
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn call(command: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "toolu_0123456789".into(),
                name: "Bash".into(),
                input: json!({ "command": command }),
            }],
        }
    }

    fn result(output: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_0123456789".into(),
                content: output.into(),
                is_error: false,
                images: Vec::new(),
            }],
        }
    }

    #[test]
    fn roles_text_commands_and_outputs_without_ids() {
        let text = render(
            &[
                Message::user_text("count the errors"),
                call("grep -c ERROR app.log"),
                result("3\n"),
                Message::assistant_text("There are 3 errors."),
            ],
            10_000,
        );
        assert_eq!(
            text,
            "[user]\ncount the errors\n\n$ grep -c ERROR app.log\n3\n\n[assistant]\nThere are 3 errors."
        );
        assert!(!text.contains("toolu_"));
    }

    #[test]
    fn long_outputs_keep_head_and_tail_and_the_budget_keeps_the_end() {
        let long: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let text = render(&[call("cat big"), result(&long)], 10_000);
        assert!(
            text.contains("line 0\n") && text.contains("line 1999"),
            "{text}"
        );
        assert!(text.contains("characters cut"));
        assert!(text.chars().count() < OUTPUT_KEPT_CHARS + 200);

        let messages = [
            Message::user_text("BEGIN"),
            Message::assistant_text(format!("{} THE-END", "word ".repeat(100))),
        ];
        let text = render(&messages, 100);
        assert!(
            text.contains("THE-END") && !text.contains("BEGIN"),
            "{text}"
        );
        assert!(text.starts_with("[… the conversation's beginning"));
    }

    #[test]
    fn the_file_is_read_from_its_end_and_a_compaction_replaces_what_came_before() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let line = |kind: &str, data: serde_json::Value| {
            json!({"type": kind, "ts": "2026-12-02T01:00:00Z", "data": data}).to_string()
        };
        let lines = [
            json!({"type": "header", "id": "20261202-abc", "created": "2026"}).to_string(),
            line(
                "message",
                serde_json::to_value(Message::user_text("OLD")).unwrap(),
            ),
            line(
                "compaction",
                json!({"messages": [Message::user_text("SUMMARY")]}),
            ),
            line("message", serde_json::to_value(call("ls")).unwrap()),
            line("permission", json!({"x": 1})),
            "{torn".to_string(),
        ];
        std::fs::write(&file, lines.join("\n")).unwrap();
        let text = read_transcript(&file, 1_000).unwrap();
        assert_eq!(text, "[user]\nSUMMARY\n\n$ ls");
        assert!(!text.contains("2026"));
    }
}
