//! Chat Completions stream chunks → [`LlmEvent`]s. `delta.content` passes straight through;
//! `delta.tool_calls` fragments are gathered per call (announced once the name is known) and
//! emitted complete when `finish_reason` arrives. The usage chunk (`stream_options.include_usage`)
//! is remembered and sent with `Done` at `[DONE]`. Servers that omit `[DONE]` after a
//! `finish_reason`, reuse index 0 for every call, or send no call ids are tolerated.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde_json::Value;

use crate::transport::{Assembler, FeedError};
use crate::types::{LlmEvent, StopReason, Usage};

#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Assembles one streamed chat completion.
#[derive(Debug, Default)]
pub(crate) struct OpenAiAssembler {
    /// Calls by our own key, in the order they began.
    calls: BTreeMap<u64, Call>,
    /// The server's `index` → our key (they differ only for servers that reuse indexes).
    keys: BTreeMap<u64, u64>,
    next_key: u64,
    finish: Option<String>,
    usage: Usage,
    /// Whether any tool call has been seen this turn, flushed ones included.
    saw_any_call: bool,
    finished: bool,
}

impl OpenAiAssembler {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn on_tool_call(&mut self, position: usize, fragment: &Value, out: &mut Vec<LlmEvent>) {
        let wire_index = fragment["index"].as_u64().unwrap_or(position as u64);
        let id = fragment["id"].as_str().filter(|s| !s.is_empty());
        let existing = self.keys.get(&wire_index).copied();
        let name = fragment["function"]["name"]
            .as_str()
            .filter(|s| !s.is_empty());
        let starts_another = |call: &Call| match id {
            Some(id) => !call.id.is_empty() && call.id != id,
            // Without ids, a named fragment after a complete argument object is a new call.
            None => {
                name.is_some()
                    && !call.name.is_empty()
                    && serde_json::from_str::<Value>(&call.arguments).is_ok()
            }
        };
        let key = match existing {
            Some(k) if !self.calls.get(&k).is_some_and(starts_another) => k,
            _ => self.new_key(wire_index),
        };
        self.saw_any_call = true;
        let call = self.calls.entry(key).or_default();
        if let (Some(id), true) = (id, call.id.is_empty()) {
            call.id = id.to_string();
        }
        if let Some(name) = name
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        if let Some(args) = fragment["function"]["arguments"].as_str() {
            call.arguments.push_str(args);
        }
        if !call.announced && !call.name.is_empty() {
            if call.id.is_empty() {
                call.id = format!("call_{key}");
            }
            call.announced = true;
            out.push(LlmEvent::ToolCallStart {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }

    fn new_key(&mut self, wire_index: u64) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        self.keys.insert(wire_index, key);
        key
    }

    /// Emits every gathered call as complete. Arguments that are not valid JSON are passed on as
    /// a JSON string, so the tool reports the bad input to the model instead of failing the turn.
    fn flush_calls(&mut self, out: &mut Vec<LlmEvent>) {
        for (key, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() {
                format!("call_{key}")
            } else {
                call.id
            };
            if !call.announced {
                out.push(LlmEvent::ToolCallStart {
                    id: id.clone(),
                    name: call.name.clone(),
                });
            }
            let input = if call.arguments.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
            };
            out.push(LlmEvent::ToolCallDone {
                id,
                name: call.name,
                input,
            });
        }
        self.keys.clear();
    }

    fn close(&mut self) -> Vec<LlmEvent> {
        let saw_calls = self.saw_any_call;
        let mut out = Vec::new();
        self.flush_calls(&mut out);
        self.finished = true;
        let stop_reason = match self.finish.as_deref() {
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            // Several servers say "stop" even when the reply is tool calls.
            Some("stop") | None if saw_calls => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
        };
        out.push(LlmEvent::Usage(self.usage));
        out.push(LlmEvent::Done { stop_reason });
        out
    }
}

impl Assembler for OpenAiAssembler {
    fn feed(&mut self, event: &Event) -> Result<Vec<LlmEvent>, FeedError> {
        if self.finished {
            return Ok(vec![]);
        }
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(self.close());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| FeedError::Protocol(format!("chunk is not JSON ({e}): {data}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let kind = ["type", "code"]
                .iter()
                .find_map(|k| error[*k].as_str())
                .unwrap_or("error")
                .to_string();
            let message = error["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(FeedError::Api { kind, message });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
            let cached = usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0);
            self.usage = Usage {
                input: prompt.saturating_sub(cached),
                output: usage["completion_tokens"].as_u64().unwrap_or(0),
                cache_read: cached,
                cache_creation: 0,
            };
        }
        let mut out = Vec::new();
        let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
            return Ok(out);
        };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(LlmEvent::TextDelta(text.to_string()));
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            for (position, fragment) in calls.iter().enumerate() {
                self.on_tool_call(position, fragment, &mut out);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish = Some(reason.to_string());
            self.flush_calls(&mut out);
        }
        Ok(out)
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn finish_at_eof(&mut self) -> Option<Vec<LlmEvent>> {
        if self.finish.is_some() {
            Some(self.close())
        } else {
            None
        }
    }
}

#[cfg(test)]
#[path = "assembler_tests.rs"]
mod tests;
