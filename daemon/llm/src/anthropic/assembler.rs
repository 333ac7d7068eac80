//! Anthropic's streamed message → [`LlmEvent`]s. Text deltas pass straight through; a `tool_use`
//! block is announced at `content_block_start`, its `input_json_delta` pieces are concatenated,
//! and the parsed input is emitted at `content_block_stop`. Usage from `message_start` and
//! `message_delta` is merged and emitted once, with `Done`, at `message_stop`.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::Value;

use crate::transport::{Assembler, FeedError};
use crate::types::{LlmEvent, StopReason, Usage};

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// Thinking, server tools and block types newer than this code: ignored.
    Other,
}

/// Assembles one streamed message.
#[derive(Debug, Default)]
pub(crate) struct AnthropicAssembler {
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    finished: bool,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

impl AnthropicAssembler {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn merge_usage(&mut self, usage: &Value) {
        let Ok(u) = WireUsage::deserialize(usage) else {
            return;
        };
        let fields = [
            (u.input_tokens, &mut self.usage.input),
            (u.output_tokens, &mut self.usage.output),
            (u.cache_read_input_tokens, &mut self.usage.cache_read),
            (
                u.cache_creation_input_tokens,
                &mut self.usage.cache_creation,
            ),
        ];
        for (value, slot) in fields {
            if let Some(v) = value {
                *slot = v;
            }
        }
    }

    fn on_block_start(&mut self, data: &Value) -> Result<Vec<LlmEvent>, FeedError> {
        let index = index_of(data)?;
        let block = &data["content_block"];
        let mut out = Vec::new();
        let entry = match block["type"].as_str() {
            Some("text") => {
                if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(LlmEvent::TextDelta(text.to_string()));
                }
                Block::Text
            }
            Some("tool_use") => {
                let id = str_field(block, "id")?;
                let name = str_field(block, "name")?;
                out.push(LlmEvent::ToolCallStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                let initial = block.get("input").cloned().unwrap_or(Value::Null);
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                    initial,
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, entry);
        Ok(out)
    }

    fn on_block_delta(&mut self, data: &Value) -> Result<Vec<LlmEvent>, FeedError> {
        let index = index_of(data)?;
        let delta = &data["delta"];
        match (self.blocks.get_mut(&index), delta["type"].as_str()) {
            (Some(Block::Text), Some("text_delta")) => {
                let text = str_field(delta, "text")?;
                Ok(if text.is_empty() {
                    vec![]
                } else {
                    vec![LlmEvent::TextDelta(text)]
                })
            }
            (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                json.push_str(&str_field(delta, "partial_json")?);
                Ok(vec![])
            }
            (Some(_), _) => Ok(vec![]),
            (None, _) => Err(FeedError::Protocol(format!(
                "delta for unknown content block {index}"
            ))),
        }
    }

    fn on_block_stop(&mut self, data: &Value) -> Result<Vec<LlmEvent>, FeedError> {
        let index = index_of(data)?;
        match self.blocks.remove(&index) {
            Some(Block::ToolUse {
                id,
                name,
                json,
                initial,
            }) => {
                let input = if json.trim().is_empty() {
                    match initial {
                        Value::Null => Value::Object(Default::default()),
                        v => v,
                    }
                } else {
                    // Input cut off (by `max_tokens`) stays as its raw text, as the OpenAI
                    // assembler does, so the agent can see the call was cut and ask again.
                    serde_json::from_str(&json).unwrap_or(Value::String(json))
                };
                Ok(vec![LlmEvent::ToolCallDone { id, name, input }])
            }
            Some(_) => Ok(vec![]),
            None => Err(FeedError::Protocol(format!(
                "stop for unknown content block {index}"
            ))),
        }
    }
}

impl Assembler for AnthropicAssembler {
    fn feed(&mut self, event: &Event) -> Result<Vec<LlmEvent>, FeedError> {
        if self.finished {
            return Ok(vec![]);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            FeedError::Protocol(format!(
                "event {:?} is not JSON ({e}): {}",
                event.event, event.data
            ))
        })?;
        // The `type` in the data is authoritative; the SSE event name mirrors it.
        let kind = data["type"]
            .as_str()
            .unwrap_or(event.event.as_str())
            .to_string();
        match kind.as_str() {
            "message_start" => {
                self.merge_usage(&data["message"]["usage"]);
                Ok(vec![])
            }
            "content_block_start" => self.on_block_start(&data),
            "content_block_delta" => self.on_block_delta(&data),
            "content_block_stop" => self.on_block_stop(&data),
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(stop_reason(reason));
                }
                self.merge_usage(&data["usage"]);
                Ok(vec![])
            }
            "message_stop" => {
                self.finished = true;
                let stop_reason = self.stop_reason.take().unwrap_or(StopReason::EndTurn);
                Ok(vec![
                    LlmEvent::Usage(self.usage),
                    LlmEvent::Done { stop_reason },
                ])
            }
            "error" => Err(FeedError::Api {
                kind: data["error"]["type"]
                    .as_str()
                    .unwrap_or("error")
                    .to_string(),
                message: data["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            }),
            // `ping` and event types added after this was written.
            _ => Ok(vec![]),
        }
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

fn index_of(data: &Value) -> Result<u64, FeedError> {
    data["index"]
        .as_u64()
        .ok_or_else(|| FeedError::Protocol(format!("content block event without an index: {data}")))
}

fn str_field(value: &Value, key: &str) -> Result<String, FeedError> {
    value[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| FeedError::Protocol(format!("missing string field {key:?} in {value}")))
}

#[cfg(test)]
#[path = "assembler_tests.rs"]
mod tests;
