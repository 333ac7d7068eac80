//! Plain renderings of chat events shared by `synapse run` and the REPL.

use synapse_shared::proto::ChatEvent;
use synapse_shared::proto::chat_event::Kind as Ev;

use crate::cli::run::usage_json;

/// `● <command>` with ` [exit N]` when it failed; the command is cut to one line.
pub fn tool_line(command: &str, exit_code: i32) -> String {
    let command = super::safe_text::strip_controls(command);
    let first = command.lines().next().unwrap_or_default();
    let more = if command.lines().count() > 1 {
        " …"
    } else {
        ""
    };
    if exit_code == 0 {
        format!("● {first}{more}")
    } else {
        format!("● {first}{more} [exit {exit_code}]")
    }
}

/// One event as a JSON object for `--output-format stream-json`.
pub fn event_json(event: &ChatEvent, session_id: &str) -> serde_json::Value {
    use serde_json::json;
    match &event.kind {
        Some(Ev::Opened(o)) => {
            json!({"type": "session", "session_id": o.session_id, "model": o.model, "cwd": o.cwd, "resumed": o.resumed})
        }
        Some(Ev::Text(t)) => json!({"type": "text", "text": t.text}),
        Some(Ev::ToolStarted(t)) => {
            json!({"type": "tool_started", "id": t.call_id, "command": t.command})
        }
        Some(Ev::ToolFinished(t)) => {
            json!({"type": "tool_finished", "id": t.call_id, "command": t.command, "exit_code": t.exit_code, "output_preview": t.output_preview, "output_lines": t.output_lines})
        }
        Some(Ev::Usage(u)) => json!({"type": "usage", "usage": usage_json(u)}),
        Some(Ev::Retrying(r)) => {
            json!({"type": "retrying", "attempt": r.attempt, "max_attempts": r.max_attempts, "delay_ms": r.delay_ms, "reason": r.reason})
        }
        Some(Ev::Error(e)) => json!({"type": "error", "message": e.message}),
        Some(Ev::TurnFinished(d)) => {
            json!({"type": "result", "session_id": session_id, "stop_reason": d.reason, "is_error": d.reason != "completed", "error": (!d.message.is_empty()).then_some(&d.message), "error_kind": (!d.error_kind.is_empty()).then_some(&d.error_kind), "http_status": (d.http_status != 0).then_some(d.http_status), "result": if d.reason == "error" { "" } else { d.final_text.as_str() }, "turn": d.turn, "usage": d.usage.as_ref().map(usage_json)})
        }
        Some(Ev::Notice(n)) => json!({"type": "notice", "text": n.text}),
        Some(Ev::Approval(a)) => {
            json!({"type": "approval_request", "id": a.request_id, "title": a.title, "detail": a.detail, "pattern": a.pattern, "rules_file": a.rules_file})
        }
        Some(Ev::Elicitation(e)) => {
            let schema: serde_json::Value =
                serde_json::from_str(&e.schema_json).unwrap_or(serde_json::Value::Null);
            json!({"type": "elicitation_request", "id": e.request_id, "server": e.server, "message": e.message, "schema": schema})
        }
        Some(Ev::EnhanceReport(r)) => json!({"type": "skill_enhance_report", "text": r.text}),
        Some(Ev::ModelChanged(m)) => json!({"type": "model_changed", "model": m.model}),
        Some(Ev::PermissionMode(m)) => {
            json!({"type": "permission_mode", "mode": m.mode, "summary": m.summary})
        }
        Some(Ev::ToolOutput(o)) => {
            json!({"type": "tool_progress", "id": o.call_id, "tail": o.tail, "total_bytes": o.total_bytes})
        }
        None => json!({"type": "unknown"}),
    }
}
