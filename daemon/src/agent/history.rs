//! Keeping the conversation valid for the model APIs: consecutive messages of one role are merged
//! (a failed turn can leave two user messages in a row) and tool calls that never got a result (a
//! crash or cancel) are closed with a note, so every `tool_use` has its `tool_result`.

use std::collections::HashSet;

use synapse_llm::{ContentBlock, Message, Role};

/// The note given as result to a tool call whose result was lost.
pub const UNANSWERED_NOTE: &str =
    "[no result: the session was interrupted before this command finished]";

/// History as the model should see it.
pub fn normalized(history: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    for message in close_unanswered(history) {
        if message.content.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == message.role => {
                last.content.extend(message.content);
            }
            _ => out.push(message),
        }
    }
    // Tool results must come first in a user message that follows tool calls.
    for message in &mut out {
        if message.role == Role::User {
            message
                .content
                .sort_by_key(|b| !matches!(b, ContentBlock::ToolResult { .. }));
        }
    }
    out
}

/// Adds results for tool calls that have none (right after the assistant message that made
/// them).
pub fn close_unanswered(history: &[Message]) -> Vec<Message> {
    let answered: HashSet<&str> = history
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(history.len() + 1);
    for message in history {
        out.push(message.clone());
        let missing: Vec<ContentBlock> = message
            .tool_uses()
            .filter(|(id, _, _)| !answered.contains(id))
            .map(|(id, _, _)| ContentBlock::ToolResult {
                tool_use_id: id.to_string(),
                content: UNANSWERED_NOTE.to_string(),
                is_error: true,
                images: Vec::new(),
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        out.push(Message {
            role: Role::User,
            content: missing,
        });
    }
    out
}

/// `history` (already [`normalized`]) for a request that offers no tool: the APIs refuse tool
/// calls and results without a tool definition, so each becomes a text block saying what ran
/// and what it printed.
pub fn tools_as_text(history: Vec<Message>) -> Vec<Message> {
    history
        .into_iter()
        .map(|message| Message {
            role: message.role,
            content: message
                .content
                .into_iter()
                .map(|block| match block {
                    ContentBlock::ToolUse { input, .. } => ContentBlock::Text {
                        text: format!(
                            "[ran: {}]",
                            input
                                .get("command")
                                .and_then(|c| c.as_str())
                                .unwrap_or_default()
                        ),
                    },
                    ContentBlock::ToolResult { content, .. } => ContentBlock::Text {
                        text: format!("[output]\n{content}"),
                    },
                    text => text,
                })
                .collect(),
        })
        .collect()
}

/// Number of tool calls without a result.
pub fn unanswered_count(history: &[Message]) -> usize {
    close_unanswered(history).len() - history.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_use(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "Bash".into(),
                input: json!({"command": "ls"}),
            }],
        }
    }

    #[test]
    fn unanswered_calls_are_closed_and_same_role_messages_merged() {
        let history = vec![
            Message::user_text("a"),
            tool_use("t1"),
            Message::user_text("b"),
        ];
        assert_eq!(unanswered_count(&history), 1);
        let n = normalized(&history);
        assert_eq!(n.len(), 3);
        assert!(
            matches!(&n[2].content[0], ContentBlock::ToolResult { tool_use_id, is_error: true, .. } if tool_use_id == "t1")
        );
        assert!(matches!(&n[2].content[1], ContentBlock::Text { text } if text == "b"));
    }

    #[test]
    fn tool_blocks_become_text_for_a_request_without_tools() {
        let history = normalized(&[Message::user_text("a"), tool_use("t1")]);
        let text = tools_as_text(history);
        assert!(matches!(&text[1].content[0], ContentBlock::Text { text } if text == "[ran: ls]"));
        assert!(
            matches!(&text[2].content[0], ContentBlock::Text { text } if text.starts_with("[output]\n"))
        );
        assert!(text.iter().all(|m| m.tool_uses().next().is_none()));
    }

    #[test]
    fn two_user_messages_in_a_row_become_one() {
        let n = normalized(&[Message::user_text("a"), Message::user_text("b")]);
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].content.len(), 2);
    }
}
