//! Session events as the `Chat` stream carries them: each [`SessionEvent`] becomes one
//! [`ChatEvent`] (tool previews cut to their first lines, usage with the context window).

use synapse_shared::proto::chat_event::Kind as Ev;
use synapse_shared::proto::{self, ChatEvent};

use crate::agent::session::SessionEvent;
use crate::agent::{AgentEvent, TurnEnd};
use synapse_llm::LimitSource;
use synapse_llm::limits::CONTEXT_WINDOW_FALLBACK;
use synapse_llm::{ContentBlock, Usage};

/// Lines of a tool's output sent as its preview.
const PREVIEW_LINES: usize = 5;

fn usage(u: &Usage, window: Option<(u64, LimitSource)>) -> proto::UsageUpdate {
    let (context_window, source) =
        window.unwrap_or((CONTEXT_WINDOW_FALLBACK, LimitSource::Fallback));
    proto::UsageUpdate {
        input_tokens: u.input,
        output_tokens: u.output,
        cache_read_tokens: u.cache_read,
        cache_creation_tokens: u.cache_creation,
        context_tokens: u.total_input() + u.output,
        context_window,
        context_source: source.describe().to_string(),
    }
}

/// Content blocks as a JSON array in the Anthropic Messages format (a tool result's images are
/// counted, not carried: clients show text).
fn blocks_json(content: &[ContentBlock]) -> String {
    let blocks: Vec<serde_json::Value> = content
        .iter()
        .map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                images,
            } => {
                let mut v = serde_json::json!({
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": content,
                    "is_error": is_error,
                });
                if !images.is_empty() {
                    v["images"] = images.len().into();
                }
                v
            }
            other => serde_json::to_value(other).unwrap_or_default(),
        })
        .collect();
    serde_json::Value::Array(blocks).to_string()
}

pub(super) fn to_wire(event: SessionEvent, window: Option<(u64, LimitSource)>) -> ChatEvent {
    let kind = match event {
        SessionEvent::Agent(AgentEvent::TextDelta(text)) => Ev::Text(proto::TextDelta { text }),
        SessionEvent::Agent(AgentEvent::ToolStarted { id, command }) => {
            Ev::ToolStarted(proto::ToolStarted {
                call_id: id,
                command,
            })
        }
        SessionEvent::Agent(AgentEvent::ToolFinished {
            id,
            command,
            exit_code,
            output,
            changes,
        }) => Ev::ToolFinished(proto::ToolFinished {
            call_id: id,
            command,
            exit_code,
            output_preview: output
                .lines()
                .take(PREVIEW_LINES)
                .collect::<Vec<_>>()
                .join("\n"),
            output_lines: output.lines().count() as u32,
            output,
            changes: changes
                .into_iter()
                .map(|c| proto::FileChange {
                    path: c.path,
                    hunks: c.hunks,
                    added: c.added,
                    removed: c.removed,
                })
                .collect(),
        }),
        SessionEvent::Agent(AgentEvent::Usage(u)) => Ev::Usage(usage(&u, window)),
        SessionEvent::Agent(AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        }) => Ev::Retrying(proto::Retrying {
            attempt,
            max_attempts,
            delay_ms: delay.as_millis() as u64,
            reason,
        }),
        SessionEvent::Agent(AgentEvent::Notice(text)) => Ev::Notice(proto::Notice { text }),
        SessionEvent::Agent(AgentEvent::ToolOutput {
            id,
            tail,
            total_bytes,
        }) => Ev::ToolOutput(proto::ToolOutput {
            call_id: id,
            tail,
            total_bytes,
        }),
        SessionEvent::Agent(AgentEvent::AssistantMessage {
            id,
            model,
            content,
            stop_reason,
            usage: u,
            duration,
        }) => Ev::Assistant(proto::AssistantMessage {
            message_id: id,
            model,
            content_json: blocks_json(&content),
            stop_reason,
            usage: Some(usage(&u, window)),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        }),
        SessionEvent::Agent(AgentEvent::ToolResults(content)) => {
            Ev::ToolResults(proto::ToolResults {
                content_json: blocks_json(&content),
            })
        }
        SessionEvent::Error(message) => Ev::Error(proto::ErrorEvent { message }),
        SessionEvent::Approval {
            id,
            title,
            detail,
            pattern,
            rules_file,
        } => Ev::Approval(proto::ApprovalRequest {
            request_id: id,
            title,
            detail,
            pattern,
            rules_file,
        }),
        SessionEvent::Elicitation {
            id,
            server,
            message,
            schema_json,
            url,
        } => Ev::Elicitation(proto::ElicitationRequest {
            request_id: id,
            server,
            message,
            schema_json,
            url,
        }),
        SessionEvent::Notice(text) => Ev::Notice(proto::Notice { text }),
        SessionEvent::PermissionMode { mode, summary } => {
            Ev::PermissionMode(proto::PermissionModeChanged { mode, summary })
        }
        SessionEvent::EnhanceReport(text) => Ev::EnhanceReport(proto::EnhanceReport { text }),
        SessionEvent::TurnFinished {
            end,
            final_text,
            turn,
            usage: u,
            peak_input,
        } => {
            let (error_kind, http_status) = match &end {
                TurnEnd::Error(f) => (f.kind.clone(), u32::from(f.status.unwrap_or(0))),
                _ => (String::new(), 0),
            };
            Ev::TurnFinished(proto::TurnFinished {
                reason: end.as_str().to_string(),
                message: end.message(),
                final_text,
                turn,
                // The window's fill is the largest request's, not the turn's sum.
                usage: Some(proto::UsageUpdate {
                    context_tokens: peak_input,
                    ..usage(&u, window)
                }),
                error_kind,
                http_status,
                background_jobs: 0,
            })
        }
    };
    ChatEvent { kind: Some(kind) }
}
