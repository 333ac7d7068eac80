//! Rendering script steps in the real wire formats. Each function returns whole events (an SSE
//! event for Anthropic, a `data:` line for OpenAI), so the server can delay, cut or hang between
//! any two of them.

use serde_json::{Value, json};

use super::request::Api;
use super::script::{Part, Reply, ToolCall};

/// Facts about the request that the rendered reply echoes.
pub(crate) struct RenderContext {
    pub request_index: usize,
    pub model: String,
    pub body_len: usize,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
}

/// The events of a complete reply in `api`'s format.
pub(crate) fn reply_events(api: Api, reply: &Reply, ctx: &RenderContext) -> Vec<String> {
    match api {
        Api::OpenAi => openai_events(reply, ctx),
        _ => anthropic_events(reply, ctx),
    }
}

/// Whether `event` (one of [`reply_events`]) carries answer text: Anthropic's `text_delta`, an
/// OpenAI chunk with non-empty `content`.
pub(crate) fn is_text_delta(api: Api, event: &str) -> bool {
    let Some(data) = event
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
    else {
        return false;
    };
    match api {
        Api::OpenAi => data["choices"][0]["delta"]["content"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        _ => data["delta"]["type"] == "text_delta",
    }
}

/// The in-stream error event.
pub(crate) fn error_event(api: Api, error_type: &str, message: &str) -> String {
    match api {
        Api::OpenAi => {
            data_line(&json!({"error": {"message": message, "type": error_type, "code": null}}))
        }
        _ => sse(
            "error",
            &json!({"type": "error", "error": {"type": error_type, "message": message}}),
        ),
    }
}

/// An HTTP error body.
pub(crate) fn error_body(
    api: Api,
    error_type: &str,
    message: &str,
    request_index: usize,
) -> String {
    match api {
        Api::OpenAi => {
            json!({"error": {"message": message, "type": error_type, "param": null, "code": null}})
        }
        _ => json!({
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": format!("req_fake_{request_index}")
        }),
    }
    .to_string()
}

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn data_line(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// The input JSON of a call split into `pieces` fragments on character boundaries.
fn json_pieces(call: &ToolCall) -> Vec<String> {
    let text = call.input.to_string();
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(call.pieces.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn tokens(reply: &Reply, ctx: &RenderContext) -> (u64, u64) {
    let input = reply
        .input_tokens
        .unwrap_or((ctx.body_len as u64 / 4).max(1));
    let output = reply
        .output_tokens
        .unwrap_or_else(|| reply.rough_output_tokens());
    (input, output)
}

fn anthropic_events(reply: &Reply, ctx: &RenderContext) -> Vec<String> {
    let (input, output) = tokens(reply, ctx);
    let n = ctx.request_index;
    let mut events = vec![
        sse(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant",
                "model": ctx.model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input,
                          "cache_creation_input_tokens": reply.cache_creation_tokens,
                          "cache_read_input_tokens": reply.cache_read_tokens,
                          "output_tokens": 1}}}),
        ),
        sse("ping", &json!({"type": "ping"})),
    ];
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            Part::Text(chunks) => {
                events.push(sse(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "text", "text": ""}}),
                ));
                for chunk in chunks {
                    events.push(sse(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "text_delta", "text": chunk}}),
                    ));
                }
            }
            Part::ToolCall(call) => {
                let id = call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("toolu_fake_{n}_{index}"));
                events.push(sse(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
                ));
                // The API opens every tool input with an empty fragment.
                let pieces = std::iter::once(String::new()).chain(json_pieces(call));
                for piece in pieces {
                    events.push(sse(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    ));
                }
            }
        }
        events.push(sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.has_tool_calls() {
            "tool_use"
        } else {
            "end_turn"
        }
        .to_string()
    });
    events.push(sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": output}}),
    ));
    events.push(sse("message_stop", &json!({"type": "message_stop"})));
    events
}

fn openai_events(reply: &Reply, ctx: &RenderContext) -> Vec<String> {
    let (input, output) = tokens(reply, ctx);
    let n = ctx.request_index;
    let chunk = |delta: Value, finish: Value| {
        let mut c = json!({
            "id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
            "created": 1_700_000_000 + n, "model": ctx.model, "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        });
        if ctx.include_usage {
            c["usage"] = Value::Null;
        }
        data_line(&c)
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    let mut call_index = 0;
    for (part_index, part) in reply.parts.iter().enumerate() {
        match part {
            Part::Text(chunks) => {
                for text in chunks {
                    events.push(chunk(json!({"content": text}), Value::Null));
                }
            }
            Part::ToolCall(call) => {
                let id = call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_fake_{n}_{part_index}"));
                events.push(chunk(
                    json!({"tool_calls": [{"index": call_index, "id": id, "type": "function",
                                           "function": {"name": call.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for piece in json_pieces(call) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
                call_index += 1;
            }
        }
    }
    let finish = reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.has_tool_calls() {
            "tool_calls"
        } else {
            "stop"
        }
        .to_string()
    });
    events.push(chunk(json!({}), Value::from(finish)));
    if ctx.include_usage {
        let cached = reply.cache_read_tokens;
        events.push(data_line(&json!({
            "id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
            "created": 1_700_000_000 + n, "model": ctx.model, "choices": [],
            "usage": {"prompt_tokens": input + cached, "completion_tokens": output,
                      "total_tokens": input + cached + output,
                      "prompt_tokens_details": {"cached_tokens": cached}}
        })));
    }
    events.push("data: [DONE]\n\n".to_string());
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(include_usage: bool) -> RenderContext {
        RenderContext {
            request_index: 0,
            model: "m".into(),
            body_len: 400,
            include_usage,
        }
    }

    fn data_of(event: &str) -> Value {
        let line = event
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap();
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn anthropic_tool_input_is_split_and_reassembles() {
        let reply = Reply::new().call(ToolCall::bash("echo 'ünïcode' > f").pieces(4));
        let events = anthropic_events(&reply, &ctx(false));
        let names: Vec<&str> = events.iter().map(|e| e.lines().next().unwrap()).collect();
        assert_eq!(names.first(), Some(&"event: message_start"));
        assert_eq!(names.last(), Some(&"event: message_stop"));
        let pieces: Vec<String> = events
            .iter()
            .map(|e| data_of(e))
            .filter(|d| d["delta"]["type"] == "input_json_delta")
            .map(|d| d["delta"]["partial_json"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(pieces.len(), 5, "an empty opener and four pieces");
        let input: Value = serde_json::from_str(&pieces.concat()).unwrap();
        assert_eq!(input, json!({"command": "echo 'ünïcode' > f"}));
        let delta = data_of(&events[events.len() - 2]);
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn the_first_text_delta_is_found_in_either_format() {
        let reply = Reply::new().tool_call("ls").text("hi there");
        let anthropic = anthropic_events(&reply, &ctx(false));
        let first = anthropic
            .iter()
            .position(|e| is_text_delta(Api::Anthropic, e))
            .unwrap();
        assert_eq!(data_of(&anthropic[first])["delta"]["text"], "hi ");
        let openai = openai_events(&reply, &ctx(false));
        let first = openai
            .iter()
            .position(|e| is_text_delta(Api::OpenAi, e))
            .unwrap();
        assert_eq!(
            data_of(&openai[first])["choices"][0]["delta"]["content"],
            "hi "
        );
        assert!(!is_text_delta(Api::OpenAi, &openai[0]), "the empty opener");
    }

    #[test]
    fn openai_usage_chunk_only_when_asked() {
        let reply = Reply::new().text("hi there");
        let with = openai_events(&reply, &ctx(true));
        let without = openai_events(&reply, &ctx(false));
        assert_eq!(with.len(), without.len() + 1);
        assert_eq!(with.last().map(String::as_str), Some("data: [DONE]\n\n"));
        assert!(
            data_of(&with[with.len() - 2])["usage"]["prompt_tokens"]
                .as_u64()
                .unwrap()
                > 0
        );
        assert_eq!(
            data_of(&without[without.len() - 2])["choices"][0]["finish_reason"],
            "stop"
        );
    }
}
