//! `session/load`'s replay: a resumed session's saved messages (the session file's records in
//! the Anthropic Messages shape, from `Sessions.Get`) as the `session/update`s an editor would
//! have seen live — the user's and the agent's text, and each tool call with its final status
//! and output. The environment's notes to the model (`<system-reminder>`) are not replayed.

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use super::map;

/// The updates that replay `messages_json`; a record that cannot be read is skipped.
pub fn replay(messages_json: &str) -> Vec<acp::SessionUpdate> {
    let Ok(messages) = serde_json::from_str::<Vec<Value>>(messages_json) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for message in &messages {
        let user = message["role"] == "user";
        match &message["content"] {
            Value::String(text) => push_text(&mut out, user, text),
            Value::Array(blocks) => {
                for block in blocks {
                    replay_block(&mut out, user, block);
                }
            }
            _ => {}
        }
    }
    out
}

fn push_text(out: &mut Vec<acp::SessionUpdate>, user: bool, text: &str) {
    if text.trim().is_empty() || text.starts_with("<system-reminder>") {
        return;
    }
    out.push(if user {
        map::user_text(text)
    } else {
        map::agent_text(text)
    });
}

fn replay_block(out: &mut Vec<acp::SessionUpdate>, user: bool, block: &Value) {
    match block["type"].as_str() {
        Some("text") => push_text(out, user, block["text"].as_str().unwrap_or_default()),
        Some("tool_use") => {
            let id = block["id"].as_str().unwrap_or_default().to_string();
            let command = block["input"]["command"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.push(acp::SessionUpdate::ToolCall(
                acp::ToolCall::new(id, command.clone())
                    .status(acp::ToolCallStatus::Completed)
                    .raw_input(serde_json::json!({ "command": command })),
            ));
        }
        Some("tool_result") => {
            let id = block["tool_use_id"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let status = if block["is_error"].as_bool().unwrap_or(false) {
                acp::ToolCallStatus::Failed
            } else {
                acp::ToolCallStatus::Completed
            };
            let text = match &block["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            out.push(acp::SessionUpdate::ToolCallUpdate(
                acp::ToolCallUpdate::new(
                    id,
                    acp::ToolCallUpdateFields::new()
                        .status(status)
                        .content(vec![acp::ToolCallContent::Content(acp::Content::new(
                            acp::ContentBlock::Text(acp::TextContent::new(text)),
                        ))]),
                ),
            ));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_turn_replays_as_text_and_finished_tool_calls() {
        let messages = serde_json::json!([
            {"role": "user", "content": [
                {"type": "text", "text": "read a.txt"},
                {"type": "text", "text": "<system-reminder>\nthe date\n</system-reminder>"}
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "read a.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "1\thello", "is_error": true}
            ]},
            {"role": "assistant", "content": "It says hello."}
        ]);
        let got = replay(&messages.to_string());
        let json: Vec<Value> = got
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = json
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update",
                "agent_message_chunk"
            ]
        );
        assert_eq!(json[0]["content"]["text"], "read a.txt");
        assert_eq!(json[2]["title"], "read a.txt");
        assert_eq!(json[3]["status"], "failed");
        assert_eq!(json[3]["content"][0]["content"]["text"], "1\thello");
        assert!(replay("not json").is_empty());
    }
}
