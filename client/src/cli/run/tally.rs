//! What a `synapse run` adds up over all its turns for the final result (`--output-format json`
//! and stream-json's `result`): model requests (`num_turns`, as Claude Code counts them), time,
//! time spent in model requests, tokens, the estimated price, and the commands the permission
//! rules or the missing user refused (`permission_denials`).

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value, json};
use synapse_session::{AssistantMessage, Usage};

use crate::repl::usage::UsageStats;

/// How a refused command's result starts (the daemon's permission gate writes it).
const DENIED_PREFIX: &str = "Permission denied";

/// The run's totals so far.
pub struct RunTally {
    started: Instant,
    requests: u32,
    api_ms: u64,
    usage: UsageStats,
    model: String,
    /// Commands of the answers so far, by tool-use id (for the denials).
    commands: HashMap<String, String>,
    denials: Vec<Value>,
}

impl RunTally {
    pub fn new(model: &str) -> Self {
        Self {
            started: Instant::now(),
            requests: 0,
            api_ms: 0,
            usage: UsageStats::default(),
            model: model.to_string(),
            commands: HashMap::new(),
            denials: Vec::new(),
        }
    }

    /// Counts one completed model answer.
    pub fn answer(&mut self, message: &AssistantMessage) {
        self.requests += 1;
        self.api_ms += message.duration_ms;
        self.usage.add_turn(&message.usage);
        if !message.model.is_empty() {
            self.model.clone_from(&message.model);
        }
        for block in content_blocks(&message.content_json) {
            if block["type"] == "tool_use"
                && let (Some(id), Some(command)) =
                    (block["id"].as_str(), block["input"]["command"].as_str())
            {
                self.commands.insert(id.to_string(), command.to_string());
            }
        }
    }

    /// Notes the refused commands among one answer's tool results.
    pub fn results(&mut self, content_json: &str) {
        for block in content_blocks(content_json) {
            let denied = block["is_error"] == true
                && block["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with(DENIED_PREFIX));
            let Some(id) = block["tool_use_id"].as_str().filter(|_| denied) else {
                continue;
            };
            let command = self.commands.get(id).cloned().unwrap_or_default();
            self.denials.push(json!({
                "tool_name": "Bash",
                "tool_use_id": id,
                "tool_input": {"command": command},
            }));
        }
    }

    /// Model requests so far.
    pub fn num_turns(&self) -> u32 {
        self.requests
    }

    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub fn duration_api_ms(&self) -> u64 {
        self.api_ms
    }

    /// The estimated price in USD (0 for a model whose price is not known).
    pub fn cost_usd(&self) -> f64 {
        self.usage.estimate(&self.model).unwrap_or(0.0)
    }

    /// Tokens summed over every request, in the Anthropic names.
    pub fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.usage.input,
            output_tokens: self.usage.output,
            cache_read_tokens: self.usage.cache_read,
            cache_creation_tokens: self.usage.cache_write,
            ..Usage::default()
        }
    }

    pub fn denials(&self) -> &[Value] {
        &self.denials
    }
}

/// The blocks of a content array sent as JSON (none when it does not parse).
pub fn content_blocks(content_json: &str) -> Vec<Value> {
    match serde_json::from_str(content_json) {
        Ok(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn requests_time_tokens_and_denials_add_up() {
        let mut tally = RunTally::new("claude-sonnet-4-5");
        tally.answer(&AssistantMessage {
            content_json:
                r#"[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf x"}}]"#
                    .into(),
            duration_ms: 40,
            usage: Usage {
                input_tokens: 1_000_000,
                output_tokens: 0,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        });
        tally.results(
            r#"[{"type":"tool_result","tool_use_id":"t1","content":"Permission denied: no","is_error":true}]"#,
        );
        tally.answer(&AssistantMessage {
            content_json: r#"[{"type":"text","text":"done"}]"#.into(),
            duration_ms: 2,
            ..AssistantMessage::default()
        });
        assert_eq!((tally.num_turns(), tally.duration_api_ms()), (2, 42));
        assert_eq!(tally.usage().input_tokens, 1_000_000);
        assert!(
            (tally.cost_usd() - 3.0).abs() < 1e-9,
            "{}",
            tally.cost_usd()
        );
        assert_eq!(
            tally.denials(),
            [
                json!({"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "rm -rf x"}})
            ]
        );
    }
}
