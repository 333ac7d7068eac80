//! The Anthropic Messages API request body, built from the neutral [`LlmRequest`].
//!
//! Prompt caching: the API caches prefixes in the order tools → system → messages and allows
//! four `cache_control` breakpoints. They sit on the last tool (when the request has any), the
//! system prompt (both byte-identical for a whole session), the last block of the message before
//! the newest user message (where the previous request of the agent loop ended, so this request
//! reads everything up to there from the cache even when the answer in between had many
//! blocks), and the last block of the newest message (written now, for the next request). The
//! OpenAI-compatible path needs no marks: its servers cache prefixes by themselves.

use serde_json::{Map, Value, json};

use crate::types::{ContentBlock, LlmRequest, Message, Role};

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body of `POST /v1/messages` with `stream: true`.
pub(crate) fn request_body(request: &LlmRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(request.model.clone()));
    body.insert("max_tokens".into(), Value::from(request.max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    if !request.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]),
        );
    }
    if !request.tools.is_empty() {
        let count = request.tools.len();
        let tools: Vec<Value> = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| {
                let mut t = json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                });
                // The breakpoint on the last tool caches all tool definitions.
                if i + 1 == count {
                    t["cache_control"] = ephemeral();
                }
                t
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let mut messages: Vec<Value> = request.messages.iter().filter_map(message).collect();
    for at in message_breakpoints(&messages) {
        if let Some(block) = messages[at]
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|blocks| blocks.last_mut())
        {
            block["cache_control"] = ephemeral();
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

/// The messages whose last block gets a breakpoint: the newest, and the user message before the
/// newest assistant message (the previous request's newest), when there is one.
fn message_breakpoints(messages: &[Value]) -> Vec<usize> {
    let Some(last) = messages.len().checked_sub(1) else {
        return Vec::new();
    };
    let is_user = |m: &Value| m["role"] == "user";
    let previous = messages[..last]
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .and_then(|a| messages[..a].iter().rposition(is_user));
    previous.into_iter().chain([last]).collect()
}

fn message(message: &Message) -> Option<Value> {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let blocks: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            // The API rejects empty text blocks; an interrupted turn can leave one behind.
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::ToolUse { id, name, input } => {
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                images,
            } => {
                // With images the content is a list: the text, then each image block.
                let content = if images.is_empty() {
                    Value::from(content.as_str())
                } else {
                    let mut parts = vec![json!({"type": "text", "text": content})];
                    parts.extend(images.iter().map(|i| {
                        json!({"type": "image", "source": {
                            "type": "base64", "media_type": i.media_type, "data": i.data
                        }})
                    }));
                    Value::Array(parts)
                };
                let mut b =
                    json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
                if *is_error {
                    b["is_error"] = Value::Bool(true);
                }
                Some(b)
            }
        })
        .collect();
    if blocks.is_empty() {
        return None;
    }
    Some(json!({"role": role, "content": blocks}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash_tool;
    use crate::types::ToolResult;
    use pretty_assertions::assert_eq;

    #[test]
    fn body_marks_cache_breakpoints_and_maps_tool_blocks() {
        let request = LlmRequest {
            model: "claude-test".into(),
            system: "You are Synapse.".into(),
            messages: vec![
                Message::user_text("list files"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: String::new(),
                        },
                        ContentBlock::ToolUse {
                            id: "toolu_1".into(),
                            name: "Bash".into(),
                            input: json!({"command": "ls"}),
                        },
                    ],
                },
                Message::tool_results([ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "a.txt".into(),
                    is_error: true,
                    images: Vec::new(),
                }]),
            ],
            tools: vec![bash_tool()],
            max_tokens: 1000,
        };
        let body = request_body(&request);
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body["tools"][0]["name"], "Bash");
        assert_eq!(
            body["tools"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(
            body["messages"][1]["content"].as_array().unwrap().len(),
            1,
            "empty text dropped"
        );
        assert_eq!(
            body["messages"][2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt",
                   "is_error": true, "cache_control": {"type": "ephemeral"}})
        );
        // Where the previous request ended: read from the cache.
        assert_eq!(
            body["messages"][0]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(body.to_string().matches("cache_control").count(), 4);
    }

    #[test]
    fn the_first_request_and_a_toolless_one_stay_within_four_breakpoints() {
        let first = LlmRequest {
            model: "m".into(),
            system: "s".into(),
            messages: vec![Message::user_text("hi")],
            tools: Vec::new(),
            max_tokens: 10,
        };
        let body = request_body(&first);
        assert!(body.get("tools").is_none());
        assert_eq!(body.to_string().matches("cache_control").count(), 2);
        let mut second = first.clone();
        second.messages.push(Message::assistant_text("hello"));
        second.messages.push(Message::user_text("again"));
        let body = request_body(&second);
        assert_eq!(body.to_string().matches("cache_control").count(), 3);
        assert_eq!(
            body["messages"][0]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            body["messages"][1]["content"][0]
                .get("cache_control")
                .is_none()
        );
    }

    #[test]
    fn a_results_images_are_image_blocks_inside_it() {
        let request = LlmRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::tool_results([ToolResult {
                tool_use_id: "t1".into(),
                content: "[image saved to /s/a.png (image/png, 3 bytes)]".into(),
                is_error: false,
                images: vec![crate::types::Image {
                    media_type: "image/png".into(),
                    data: "aGk=".into(),
                }],
            }])],
            tools: Vec::new(),
            max_tokens: 10,
        };
        let body = request_body(&request);
        let result = &body["messages"][0]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["content"][0]["type"], "text");
        assert_eq!(
            result["content"][1],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}})
        );
    }

    #[test]
    fn a_request_without_tools_has_no_tools_field() {
        // A sub-agent that runs no commands (the skill search) is offered no tool: the field
        // is left out, since some servers reject an empty list.
        let request = LlmRequest {
            model: "m".into(),
            system: "Answer with JSON.".into(),
            messages: vec![Message::user_text("find a skill")],
            tools: Vec::new(),
            max_tokens: 10,
        };
        let body = request_body(&request);
        assert!(body.get("tools").is_none(), "{body}");
        assert!(body.get("tool_choice").is_none(), "{body}");
    }
}
