//! Session events as the `Chat` stream carries them: each [`SessionEvent`] becomes one event of
//! the session contract ([`synapse_session::Event`]: tool previews cut to their first lines, a
//! call's kind and title, usage with the context window), which
//! [`synapse_shared::session_wire`] puts on the wire — the one conversion every front end reads
//! back.

use synapse_session as session;
use synapse_shared::proto::ChatEvent;
use synapse_shared::session_wire::event_to_wire;

use crate::agent::session::SessionEvent;
use crate::agent::{AgentEvent, TurnEnd};
use crate::shell::call_kind::CallLook;
use synapse_llm::LimitSource;
use synapse_llm::limits::CONTEXT_WINDOW_FALLBACK;
use synapse_llm::{ContentBlock, Usage};

/// Lines of a tool's output sent as its preview.
const PREVIEW_LINES: usize = 5;

fn usage(u: &Usage, window: Option<(u64, LimitSource)>) -> session::Usage {
    let (context_window, source) =
        window.unwrap_or((CONTEXT_WINDOW_FALLBACK, LimitSource::Fallback));
    session::Usage {
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

/// The wire form of `event`; `look` says how a tool call's command looks to a front end.
pub(super) fn to_wire(
    event: SessionEvent,
    window: Option<(u64, LimitSource)>,
    look: &dyn Fn(&str) -> CallLook,
) -> ChatEvent {
    event_to_wire(to_session(event, window, look))
}

fn to_session(
    event: SessionEvent,
    window: Option<(u64, LimitSource)>,
    look: &dyn Fn(&str) -> CallLook,
) -> session::Event {
    use session::Event as E;
    match event {
        SessionEvent::Agent(AgentEvent::TextDelta(text)) => E::Text(text),
        SessionEvent::Agent(AgentEvent::ToolStarted { id, command }) => {
            let CallLook {
                kind,
                title,
                locations,
            } = look(&command);
            E::ToolCall(session::ToolCall {
                id,
                command,
                kind,
                title,
                locations,
            })
        }
        SessionEvent::Agent(AgentEvent::ToolFinished {
            id,
            command,
            exit_code,
            output,
            changes,
        }) => E::ToolDone(session::ToolDone {
            id,
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
                .map(|c| session::FileChange {
                    path: c.path,
                    hunks: c.hunks,
                    added: c.added,
                    removed: c.removed,
                })
                .collect(),
        }),
        SessionEvent::Agent(AgentEvent::Usage(u)) => E::Usage(usage(&u, window)),
        SessionEvent::Agent(AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        }) => E::Retrying(session::Retrying {
            attempt,
            max_attempts,
            delay_ms: delay.as_millis() as u64,
            reason,
        }),
        SessionEvent::Agent(AgentEvent::Notice(text)) | SessionEvent::Notice(text) => {
            E::Notice(text)
        }
        SessionEvent::Agent(AgentEvent::ToolOutput {
            id,
            tail,
            total_bytes,
        }) => E::ToolProgress(session::ToolProgress {
            id,
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
        }) => E::Assistant(session::AssistantMessage {
            message_id: id,
            model,
            content_json: blocks_json(&content),
            stop_reason,
            usage: usage(&u, window),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        }),
        SessionEvent::Agent(AgentEvent::ToolResults(content)) => {
            E::ToolResults(blocks_json(&content))
        }
        SessionEvent::Error(message) => E::Error(message),
        SessionEvent::Approval {
            id,
            call_id,
            title,
            detail,
            options,
            pattern,
            rules_file,
        } => E::Question(session::Question::Approval(session::ApprovalQuestion {
            id,
            call_id,
            title,
            detail,
            options,
            pattern,
            rules_file,
        })),
        SessionEvent::Elicitation {
            id,
            server,
            message,
            schema_json,
            url,
        } => E::Question(session::Question::Form(session::FormQuestion {
            id,
            server,
            message,
            schema_json,
            url,
        })),
        SessionEvent::Plan(entries) => E::Plan(entries),
        SessionEvent::QuestionClosed { id, answer, why } => {
            E::QuestionClosed(session::QuestionClosed { id, answer, why })
        }
        SessionEvent::PermissionMode { mode, summary } => E::ModeChanged { mode, summary },
        SessionEvent::EnhanceReport(text) => E::EnhanceReport(text),
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
            E::TurnEnded(session::TurnEnded {
                reason: session::StopReason::parse(end.as_str()),
                message: end.message(),
                final_text,
                turn,
                // The window's fill is the largest request's, not the turn's sum.
                usage: session::Usage {
                    context_tokens: peak_input,
                    ..usage(&u, window)
                },
                error_kind,
                http_status,
                background_jobs: 0,
            })
        }
    }
}
