//! `synapse run --output-format stream-json` in Claude Code's event schema (what `claude -p
//! --output-format stream-json` prints), one JSON object per line:
//!
//! - first `{"type":"system","subtype":"init","session_id","cwd","model","tools":["Bash"],
//!   "mcp_servers":[{"name","status"}],"slash_commands","agents","permissionMode","apiKeySource",…}`;
//! - each model answer `{"type":"assistant","message":{"id","type":"message","role":"assistant",
//!   "model","content":[text | tool_use blocks],"stop_reason","usage"},"session_id",
//!   "parent_tool_use_id":null}`;
//! - the answer's tool results `{"type":"user","message":{"role":"user","content":[{"type":
//!   "tool_result","tool_use_id","content","is_error"}]},…}`;
//! - after each turn `{"type":"result","subtype":"success"|"error_max_turns"|
//!   "error_during_execution","is_error","duration_ms","duration_api_ms","num_turns","result",
//!   "session_id","total_cost_usd","usage","permission_denials"}` (plus Synapse's `stop_reason`
//!   and `error`).
//!
//! Synapse's own events are `{"type":"system","subtype":<name>,…}`: `tool_progress` (with the
//! call's `tool_use_id`), `approval_request`, `approval_answer`, `elicitation_request`,
//! `elicitation_declined`, `retrying`, `notice`, `error`, `permission_mode`, `model_changed`,
//! `skill_enhance_report`. Tool start/finish are not printed: the `assistant` and `user` messages
//! carry them whole; text deltas only with `--include-partial-messages`, as Claude Code's
//! `{"type":"stream_event","event":{"type":"content_block_delta",…"text_delta"…}}`.

use serde_json::{Value, json};
use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::{ChatEvent, TurnFinished};

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
}

/// The stream-json printer's state.
pub struct StreamJson {
    session_id: String,
    cwd: String,
    model: String,
    facts: InitFacts,
    init_sent: bool,
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
            partial,
        }
    }

    /// The lines for one event (the `init` line first, once the permission mode is known).
    pub fn lines(&mut self, event: &ChatEvent) -> Vec<Value> {
        let mut out = Vec::new();
        if !self.init_sent {
            self.init_sent = true;
            let mode = match &event.kind {
                Some(Ev::PermissionMode(m)) => m.mode.clone(),
                _ => String::new(),
            };
            out.push(self.init(&mode));
            if matches!(event.kind, Some(Ev::PermissionMode(_))) {
                return out;
            }
        }
        out.extend(self.event(event));
        out
    }

    fn init(&self, mode: &str) -> Value {
        json!({
            "type": "system",
            "subtype": "init",
            "session_id": self.session_id,
            "cwd": self.cwd,
            "model": self.model,
            "tools": ["Bash"],
            "mcp_servers": self.facts.mcp_servers,
            "slash_commands": self.facts.slash_commands,
            "agents": self.facts.agents,
            "permissionMode": claude_mode(mode),
            "synapse_permission_mode": mode,
            "apiKeySource": "none",
            "output_style": "default",
            "claude_code_version": null,
            "synapse_version": env!("CARGO_PKG_VERSION"),
        })
    }

    /// `{"type":"system","subtype":…}` with the session id.
    fn system(&self, subtype: &str, fields: Value) -> Value {
        let mut v = json!({"type": "system", "subtype": subtype, "session_id": self.session_id});
        if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), fields) {
            obj.extend(extra);
        }
        v
    }

    fn event(&self, event: &ChatEvent) -> Option<Value> {
        let v = match event.kind.as_ref()? {
            Ev::Assistant(a) => json!({
                "type": "assistant",
                "message": {
                    "id": a.message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": a.model,
                    "content": content_blocks(&a.content_json),
                    "stop_reason": a.stop_reason,
                    "stop_sequence": null,
                    "usage": a.usage.as_ref().map(usage_json),
                },
                "parent_tool_use_id": null,
                "session_id": self.session_id,
            }),
            Ev::ToolResults(r) => json!({
                "type": "user",
                "message": {"role": "user", "content": content_blocks(&r.content_json)},
                "parent_tool_use_id": null,
                "session_id": self.session_id,
            }),
            Ev::Text(t) if self.partial => json!({
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": t.text},
                },
                "parent_tool_use_id": null,
                "session_id": self.session_id,
            }),
            Ev::ToolOutput(o) => self.system(
                "tool_progress",
                json!({"tool_use_id": o.call_id, "tail": o.tail, "total_bytes": o.total_bytes}),
            ),
            Ev::Retrying(r) => self.system(
                "retrying",
                json!({"attempt": r.attempt, "max_attempts": r.max_attempts, "delay_ms": r.delay_ms, "reason": r.reason}),
            ),
            Ev::Error(e) => self.system("error", json!({"message": e.message})),
            Ev::Notice(n) => self.system("notice", json!({"text": n.text})),
            Ev::Approval(a) => self.system(
                "approval_request",
                json!({"request_id": a.request_id, "title": a.title, "detail": a.detail, "pattern": a.pattern, "rules_file": a.rules_file}),
            ),
            Ev::Elicitation(e) => {
                let schema: Value = serde_json::from_str(&e.schema_json).unwrap_or(Value::Null);
                self.system(
                    "elicitation_request",
                    json!({"request_id": e.request_id, "server": e.server, "message": e.message, "schema": schema}),
                )
            }
            Ev::EnhanceReport(r) => self.system("skill_enhance_report", json!({"text": r.text})),
            Ev::ModelChanged(m) => self.system("model_changed", json!({"model": m.model})),
            Ev::PermissionMode(m) => self.system(
                "permission_mode",
                json!({"permissionMode": claude_mode(&m.mode), "synapse_permission_mode": m.mode, "summary": m.summary}),
            ),
            // Text deltas, tool start/finish and usage are in the messages above; the turn's
            // end is the result line.
            _ => return None,
        };
        Some(v)
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

    /// The `result` line for a finished turn.
    pub fn result(&self, done: &TurnFinished, tally: &RunTally) -> Value {
        result_json(done, tally, &self.session_id)
    }
}

/// The fields Claude Code's result carries (shared by `--output-format json`).
pub fn result_json(done: &TurnFinished, tally: &RunTally, session_id: &str) -> Value {
    let ok = done.reason == "completed";
    let subtype = match done.reason.as_str() {
        "completed" => "success",
        "max_turns" => "error_max_turns",
        _ => "error_during_execution",
    };
    json!({
        "type": "result",
        "subtype": subtype,
        "is_error": !ok,
        "duration_ms": tally.duration_ms(),
        "duration_api_ms": tally.duration_api_ms(),
        "num_turns": tally.num_turns(),
        "result": if done.reason == "error" { "" } else { done.final_text.as_str() },
        "session_id": session_id,
        "total_cost_usd": tally.cost_usd(),
        "usage": usage_json(&tally.usage()),
        "permission_denials": tally.denials(),
        "stop_reason": done.reason,
        "error": (!ok).then(|| super::error_json(done)),
    })
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
