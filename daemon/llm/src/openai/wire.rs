//! The Chat Completions request body, built from the neutral [`LlmRequest`]. Assistant tool_use
//! blocks become `tool_calls` (arguments as a JSON string), tool_result blocks become `tool`
//! messages placed right after the assistant message that asked for them, and the system prompt
//! is the first message.

use serde_json::{Map, Value, json};

use crate::types::{ContentBlock, LlmRequest, Message, Role};

/// How the output budget is named: OpenAI's own API wants `max_completion_tokens` (its reasoning
/// models reject `max_tokens`); local servers know `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

/// The JSON body of `POST {base}/chat/completions` with streaming and usage reporting on.
pub(crate) fn request_body(request: &LlmRequest, max_field: MaxTokensField) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(request.model.clone()));
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let max_key = match max_field {
        MaxTokensField::MaxTokens => "max_tokens",
        MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
    };
    body.insert(max_key.into(), Value::from(request.max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

fn push_message(out: &mut Vec<Value>, message: &Message) {
    match message.role {
        Role::Assistant => {
            let text = message.text();
            let calls: Vec<Value> = message
                .tool_uses()
                .map(|(id, name, input)| {
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": input.to_string()}})
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return;
            }
            let mut m = json!({"role": "assistant"});
            m["content"] = if text.is_empty() {
                Value::Null
            } else {
                Value::from(text)
            };
            if !calls.is_empty() {
                m["tool_calls"] = Value::Array(calls);
            }
            out.push(m);
        }
        Role::User => {
            // Tool messages must directly follow the assistant's tool_calls, so they go first;
            // tool messages hold text only, so their images follow in one user message.
            let mut text = String::new();
            let mut images: Vec<Value> = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        images: returned,
                    } => {
                        if !returned.is_empty() {
                            images.push(json!({"type": "text", "text": format!(
                                "The image(s) returned by tool call {tool_use_id}:"
                            )}));
                            images.extend(returned.iter().map(|i| {
                                json!({"type": "image_url", "image_url": {
                                    "url": format!("data:{};base64,{}", i.media_type, i.data)
                                }})
                            }));
                        }
                        let content = if *is_error {
                            format!("Error: {content}")
                        } else {
                            content.clone()
                        };
                        out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                    }
                    ContentBlock::Text { text: t } => {
                        if !text.is_empty() && !t.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(t);
                    }
                    ContentBlock::ToolUse { .. } => {}
                }
            }
            if !images.is_empty() {
                if !text.is_empty() {
                    images.push(json!({"type": "text", "text": text}));
                }
                out.push(json!({"role": "user", "content": images}));
            } else if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash_tool;
    use crate::types::ToolResult;
    use pretty_assertions::assert_eq;

    #[test]
    fn conversation_maps_to_chat_messages() {
        let request = LlmRequest {
            model: "qwen3".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "Bash".into(),
                        input: json!({"command": "ls"}),
                    }],
                },
                Message::tool_results([ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                    images: Vec::new(),
                }]),
            ],
            tools: vec![bash_tool()],
            max_tokens: 100,
        };
        let body = request_body(&request, MaxTokensField::MaxTokens);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
            ])
        );
        assert_eq!(body["tools"][0]["function"]["name"], "Bash");
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["max_tokens"], 100);
    }

    #[test]
    fn a_results_images_follow_the_tool_messages_as_a_user_message() {
        let request = LlmRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::tool_results([
                ToolResult {
                    tool_use_id: "c1".into(),
                    content: "shot".into(),
                    is_error: false,
                    images: vec![crate::types::Image {
                        media_type: "image/png".into(),
                        data: "aGk=".into(),
                    }],
                },
                ToolResult {
                    tool_use_id: "c2".into(),
                    content: "plain".into(),
                    is_error: false,
                    images: Vec::new(),
                },
            ])],
            tools: Vec::new(),
            max_tokens: 10,
        };
        let body = request_body(&request, MaxTokensField::MaxTokens);
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["tool", "tool", "user"]);
        assert_eq!(
            messages[2]["content"][1],
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}})
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
        let body = request_body(&request, MaxTokensField::MaxTokens);
        assert!(body.get("tools").is_none(), "{body}");
        assert!(body.get("tool_choice").is_none(), "{body}");
    }
}
