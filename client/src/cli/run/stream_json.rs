//! `synapse run --output-format stream-json` in Claude Code's event schema (what `claude -p
//! --output-format stream-json --verbose` prints; `--verbose` changes nothing here), one JSON
//! object per line, each with a `uuid`:
//!
//! - first `{"type":"system","subtype":"init","session_id","cwd","model","tools":["Bash"],
//!   "mcp_servers":[{"name","status"}],"slash_commands","agents","skills","plugins":[{"name",
//!   "path","source","version"}],"permissionMode","apiKeySource","claude_code_version",…}` (the version is
//!   Synapse's, also in `synapse_version`);
//! - each model answer `{"type":"assistant","message":{"id","type":"message","role":"assistant",
//!   "model","content":[text | tool_use blocks],"stop_reason","usage"},"session_id",
//!   "parent_tool_use_id":null,"uuid","timestamp"}`;
//! - one line per tool result `{"type":"user","message":{"role":"user","content":[{"type":
//!   "tool_result","tool_use_id","content","is_error"}]},"tool_use_result",…}` ([`stamp`]);
//! - after each batch of input `{"type":"result","subtype":"success"|"error_max_turns"|
//!   "error_during_execution","is_error","duration_ms","duration_api_ms","num_turns","result",
//!   "session_id","total_cost_usd","usage","permission_denials"}` (with `errors` when it did not
//!   succeed, plus Synapse's `stop_reason` and `error`). Input lines that arrive while a turn
//!   runs belong to its batch, so `printf '…\n…\n' | synapse run --input-format stream-json`
//!   prints one result, as Claude Code does; a line sent after a result starts a new batch
//!   (another `init`, another `result`).
//!
//! Synapse's own events are `{"type":"system","subtype":<name>,…}`: `tool_progress` (with the
//! call's `tool_use_id`), `approval_request`, `approval_answer`, `elicitation_request`,
//! `elicitation_declined`, `retrying`, `notice`, `error`, `permission_mode`, `model_changed`,
//! `skill_enhance_report`. Tool start/finish are not printed: the `assistant` and `user` messages
//! carry them whole; text deltas only with `--include-partial-messages`, as Claude Code's
//! `{"type":"stream_event","event":{"type":"content_block_delta",…"text_delta"…}}`.

use serde_json::{Value, json};
use synapse_session::{Event, Question, StopReason, TurnEnded};

use super::stamp;
use super::tally::{RunTally, content_blocks};
use crate::cli::run::usage_json;

/// What the `init` line reports besides the session's own facts (gathered by `init_facts`).
#[derive(Debug, Clone, Default)]
pub struct InitFacts {
    /// `{"name","status"}` per MCP server the session can use.
    pub mcp_servers: Vec<Value>,
    /// User-invocable skills and commands, without the `/`.
    pub slash_commands: Vec<String>,
    /// Sub-agents (`task:<name>`), without `task:`.
    pub agents: Vec<String>,
    /// The skills the model may load, by name.
    pub skills: Vec<String>,
    /// `{"name","path","source"}` per Claude Code plugin the session's skills come from.
    pub plugins: Vec<Value>,
    /// The tools the model is offered: `Bash`, or none (`--disallowedTools Bash`).
    pub tools: Vec<String>,
    /// `--dangerously-skip-permissions`: Claude Code calls the mode `bypassPermissions`.
    pub bypass: bool,
}

/// The stream-json printer's state.
pub struct StreamJson {
    session_id: String,
    cwd: String,
    model: String,
    facts: InitFacts,
    init_sent: bool,
    /// The session's permission mode, for the `init` line of each new batch of input.
    mode: String,
    /// `--include-partial-messages`: text deltas as `stream_event` lines.
    partial: bool,
}

impl StreamJson {
    pub fn new(session_id: &str, cwd: &str, model: &str, facts: InitFacts, partial: bool) -> Self {
        Self {
            session_id: session_id.to_string(),
            cwd: cwd.to_string(),
            model: model.to_string(),
            facts,
            init_sent: false,
            mode: String::new(),
            partial,
        }
    }

    /// The lines for one event (the `init` line first, once the permission mode is known), each
    /// with its `uuid` (and `timestamp` on messages).
    pub fn lines(&mut self, event: &Event) -> Vec<Value> {
        let mut out = Vec::new();
        if let Event::ModeChanged { mode, .. } = event {
            self.mode.clone_from(mode);
        }
        if !self.init_sent {
            self.init_sent = true;
            out.push(self.init(&self.mode));
            if matches!(event, Event::ModeChanged { .. }) {
                out.iter_mut().for_each(stamp::stamp);
                return out;
            }
        }
        out.extend(self.event(event));
        out.iter_mut().for_each(stamp::stamp);
        out
    }

    /// After a `result`: the next input starts a new batch, which opens with an `init` line
    /// again, as Claude Code prints it.
    pub fn next_batch(&mut self) {
        self.init_sent = false;
    }

    fn init(&self, mode: &str) -> Value {
        json!({
            "type": "system",
            "subtype": "init",
            "session_id": self.session_id,
            "cwd": self.cwd,
            "model": self.model,
            "tools": self.facts.tools,
            "mcp_servers": self.facts.mcp_servers,
            "slash_commands": self.facts.slash_commands,
            "agents": self.facts.agents,
            "skills": self.facts.skills,
            "plugins": self.facts.plugins,
            "permissionMode": if self.facts.bypass { "bypassPermissions" } else { claude_mode(mode) },
            "synapse_permission_mode": mode,
            "apiKeySource": "none",
            "output_style": "default",
            // The field Claude Code's consumers read the version from, with Synapse's.
            "claude_code_version": env!("CARGO_PKG_VERSION"),
            "synapse_version": env!("CARGO_PKG_VERSION"),
            "original_cwd": self.cwd,
        })
    }

    /// `{"type":"system","subtype":…}` with the session id.
    fn system(&self, subtype: &str, fields: Value) -> Value {
        let mut v = json!({"type": "system", "subtype": subtype, "session_id": self.session_id});
        if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), fields) {
            obj.extend(extra);
        }
        stamp::stamp(&mut v);
        v
    }

    fn event(&self, event: &Event) -> Vec<Value> {
        let v = match event {
            Event::Assistant(a) => json!({
                "type": "assistant",
                "message": {
                    "id": a.message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": a.model,
                    "content": content_blocks(&a.content_json),
                    "stop_reason": a.stop_reason,
                    "stop_sequence": null,
                    "usage": usage_json(&a.usage),
                },
                "parent_tool_use_id": null,
                "session_id": self.session_id,
            }),
            // One line per result, as Claude Code prints them, each with its `tool_use_result`.
            Event::ToolResults(content_json) => {
                return content_blocks(content_json)
                    .into_iter()
                    .map(|block| {
                        json!({
                            "type": "user",
                            "message": {"role": "user", "content": [&block]},
                            "parent_tool_use_id": null,
                            "session_id": self.session_id,
                            "tool_use_result": stamp::tool_use_result(&block),
                        })
                    })
                    .collect();
            }
            Event::Text(text) if self.partial => json!({
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text},
                },
                "parent_tool_use_id": null,
                "session_id": self.session_id,
            }),
            Event::ToolProgress(o) => self.system(
                "tool_progress",
                json!({"tool_use_id": o.id, "tail": o.tail, "total_bytes": o.total_bytes}),
            ),
            Event::Retrying(r) => self.system(
                "retrying",
                json!({"attempt": r.attempt, "max_attempts": r.max_attempts, "delay_ms": r.delay_ms, "reason": r.reason}),
            ),
            Event::Error(message) => self.system("error", json!({"message": message})),
            Event::Notice(text) => self.system("notice", json!({"text": text})),
            Event::Question(Question::Approval(a)) => self.system(
                "approval_request",
                json!({"request_id": a.id, "title": a.title, "detail": a.detail, "pattern": a.pattern, "rules_file": a.rules_file}),
            ),
            Event::Question(Question::Form(e)) => {
                let schema: Value = serde_json::from_str(&e.schema_json).unwrap_or(Value::Null);
                self.system(
                    "elicitation_request",
                    json!({"request_id": e.id, "server": e.server, "message": e.message, "schema": schema}),
                )
            }
            Event::EnhanceReport(text) => {
                self.system("skill_enhance_report", json!({"text": text}))
            }
            Event::ModelChanged(model) => self.system("model_changed", json!({"model": model})),
            Event::ModeChanged { mode, summary } => self.system(
                "permission_mode",
                json!({"permissionMode": claude_mode(mode), "synapse_permission_mode": mode, "summary": summary}),
            ),
            // Text deltas, tool start/finish and usage are in the messages above; the turn's
            // end is the result line.
            _ => return Vec::new(),
        };
        vec![v]
    }

    /// How the run answered an approval request (`decision`: "yes" or "no").
    pub fn approval_answer(&self, request_id: &str, decision: &str, why: &str) -> Value {
        self.system(
            "approval_answer",
            json!({"request_id": request_id, "decision": decision, "reason": why}),
        )
    }

    /// The run declined an MCP server's form.
    pub fn elicitation_declined(&self, request_id: &str, server: &str) -> Value {
        self.system(
            "elicitation_declined",
            json!({"request_id": request_id, "server": server, "reason": "non-interactive run"}),
        )
    }

    /// The `result` line for a finished batch of turns.
    pub fn result(&self, done: &TurnEnded, tally: &RunTally, max_turns: Option<u32>) -> Value {
        let mut line = result_json(done, tally, &self.session_id, max_turns);
        stamp::stamp(&mut line);
        line
    }
}

/// The fields Claude Code's result carries (shared by `--output-format json`). A run that did not
/// succeed says why in `errors` (Claude Code's words for `--max-turns`, whose `num_turns` counts,
/// as Claude Code's does, the turn the limit refused to start).
pub fn result_json(
    done: &TurnEnded,
    tally: &RunTally,
    session_id: &str,
    max_turns: Option<u32>,
) -> Value {
    let ok = done.reason.is_success();
    let (subtype, num_turns, error) = match done.reason {
        StopReason::Completed => ("success", tally.num_turns(), None),
        StopReason::MaxTurns => (
            "error_max_turns",
            tally.num_turns() + 1,
            Some(match max_turns {
                Some(n) => format!("Reached maximum number of turns ({n})"),
                None => done.message.clone(),
            }),
        ),
        _ => (
            "error_during_execution",
            tally.num_turns(),
            Some(done.message.clone()),
        ),
    };
    let mut v = json!({
        "type": "result",
        "subtype": subtype,
        "is_error": !ok,
        "duration_ms": tally.duration_ms(),
        "duration_api_ms": tally.duration_api_ms(),
        "num_turns": num_turns,
        "result": if done.reason == StopReason::Error { "" } else { done.final_text.as_str() },
        "session_id": session_id,
        "total_cost_usd": tally.cost_usd(),
        "usage": usage_json(&tally.usage()),
        "permission_denials": tally.denials(),
        "stop_reason": done.reason.as_str(),
        "error": (!ok).then(|| super::error_json(done)),
    });
    if let (Some(error), Some(obj)) = (error, v.as_object_mut()) {
        obj.insert("errors".into(), json!([error]));
    }
    v
}

/// Claude Code's name for a Synapse permission mode.
fn claude_mode(mode: &str) -> &'static str {
    match mode {
        "ask" => "default",
        "read-only" => "plan",
        "yolo" => "bypassPermissions",
        // Writes inside the project run unasked, risky commands ask.
        _ => "acceptEdits",
    }
}
