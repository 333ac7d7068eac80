//! [`Event`] ⇄ [`proto::ChatEvent`].

use synapse_session::{
    AnswerOption, ApprovalQuestion, AssistantMessage, ClosedWhy, Decision, Event, FileChange,
    FileOp, FileRequest, FormQuestion, InstructionFile, Opened, PlanEntry, PlanPriority,
    PlanStatus, Question, QuestionClosed, Retrying, StopReason, ToolCall, ToolDone, ToolKind,
    ToolProgress, TurnEnded, Usage,
};

use super::WireError;
use crate::proto::{self, chat_event::Kind as Ev};

pub(super) fn to_wire(event: Event) -> proto::ChatEvent {
    let kind = match event {
        Event::Opened(o) => Ev::Opened(proto::SessionOpened {
            session_id: o.session_id,
            model: o.model,
            cwd: o.cwd,
            resumed: o.resumed,
            messages: o.messages,
            warnings: o.warnings,
            turns: o.turns,
            turn_running: o.turn_running,
            broken_skills: o.broken_skills,
            instructions: o
                .instructions
                .into_iter()
                .map(|i| proto::InstructionFile {
                    path: i.path,
                    shown: i.shown,
                    bytes: i.bytes,
                    cut: i.cut,
                })
                .collect(),
        }),
        Event::Text(text) => Ev::Text(proto::TextDelta { text }),
        Event::ToolCall(c) => Ev::ToolStarted(proto::ToolStarted {
            call_id: c.id,
            command: c.command,
            kind: c.kind.as_str().to_string(),
            title: c.title,
            locations: c.locations,
        }),
        Event::ToolProgress(p) => Ev::ToolOutput(proto::ToolOutput {
            call_id: p.id,
            tail: p.tail,
            total_bytes: p.total_bytes,
        }),
        Event::ToolDone(d) => Ev::ToolFinished(proto::ToolFinished {
            call_id: d.id,
            command: d.command,
            exit_code: d.exit_code,
            output_preview: d.output_preview,
            output_lines: d.output_lines,
            output: d.output,
            changes: d
                .changes
                .into_iter()
                .map(|c| proto::FileChange {
                    path: c.path,
                    hunks: c.hunks,
                    added: c.added,
                    removed: c.removed,
                })
                .collect(),
        }),
        Event::Plan(entries) => Ev::Plan(proto::Plan {
            entries: entries
                .into_iter()
                .map(|e| proto::PlanEntry {
                    content: e.content,
                    status: e.status.as_str().to_string(),
                    priority: e.priority.as_str().to_string(),
                })
                .collect(),
        }),
        Event::Usage(u) => Ev::Usage(usage_to_wire(u)),
        Event::Retrying(r) => Ev::Retrying(proto::Retrying {
            attempt: r.attempt,
            max_attempts: r.max_attempts,
            delay_ms: r.delay_ms,
            reason: r.reason,
        }),
        Event::Error(message) => Ev::Error(proto::ErrorEvent { message }),
        Event::Notice(text) => Ev::Notice(proto::Notice { text }),
        Event::Question(Question::Approval(q)) => Ev::Approval(proto::ApprovalRequest {
            request_id: q.id,
            title: q.title,
            detail: q.detail,
            pattern: q.pattern,
            rules_file: q.rules_file,
            call_id: q.call_id,
            options: q
                .options
                .into_iter()
                .map(|o| proto::ApprovalOption {
                    decision: o.decision.as_str().to_string(),
                    label: o.label,
                })
                .collect(),
        }),
        Event::Question(Question::Form(q)) => Ev::Elicitation(proto::ElicitationRequest {
            request_id: q.id,
            server: q.server,
            message: q.message,
            schema_json: q.schema_json,
            url: q.url,
        }),
        Event::QuestionClosed(c) => Ev::QuestionClosed(proto::QuestionClosed {
            request_id: c.id,
            answer: c.answer,
            why: c.why.as_str().to_string(),
        }),
        Event::EnhanceReport(text) => Ev::EnhanceReport(proto::EnhanceReport { text }),
        Event::ModelChanged(model) => Ev::ModelChanged(proto::ModelChanged { model }),
        Event::ModeChanged { mode, summary } => {
            Ev::PermissionMode(proto::PermissionModeChanged { mode, summary })
        }
        Event::Assistant(a) => Ev::Assistant(proto::AssistantMessage {
            message_id: a.message_id,
            model: a.model,
            content_json: a.content_json,
            stop_reason: a.stop_reason,
            usage: Some(usage_to_wire(a.usage)),
            duration_ms: a.duration_ms,
        }),
        Event::ToolResults(content_json) => Ev::ToolResults(proto::ToolResults { content_json }),
        Event::TurnEnded(t) => Ev::TurnFinished(proto::TurnFinished {
            reason: t.reason.as_str().to_string(),
            message: t.message,
            final_text: t.final_text,
            turn: t.turn,
            usage: Some(usage_to_wire(t.usage)),
            error_kind: t.error_kind,
            http_status: t.http_status,
            background_jobs: t.background_jobs,
        }),
        Event::FileRequest(r) => Ev::FileRequest(proto::FileRequest {
            request_id: r.id,
            op: r.op.as_str().to_string(),
            path: r.path,
            content: r.content,
        }),
    };
    proto::ChatEvent { kind: Some(kind) }
}

pub(super) fn from_wire(event: proto::ChatEvent) -> Result<Event, WireError> {
    Ok(match event.kind.ok_or(WireError::NoKind("ChatEvent"))? {
        Ev::Opened(o) => Event::Opened(Opened {
            session_id: o.session_id,
            model: o.model,
            cwd: o.cwd,
            resumed: o.resumed,
            messages: o.messages,
            warnings: o.warnings,
            turns: o.turns,
            turn_running: o.turn_running,
            broken_skills: o.broken_skills,
            instructions: o
                .instructions
                .into_iter()
                .map(|i| InstructionFile {
                    path: i.path,
                    shown: i.shown,
                    bytes: i.bytes,
                    cut: i.cut,
                })
                .collect(),
        }),
        Ev::Text(t) => Event::Text(t.text),
        Ev::ToolStarted(c) => Event::ToolCall(ToolCall {
            id: c.call_id,
            command: c.command,
            kind: ToolKind::parse(&c.kind)?,
            title: c.title,
            locations: c.locations,
        }),
        Ev::ToolOutput(p) => Event::ToolProgress(ToolProgress {
            id: p.call_id,
            tail: p.tail,
            total_bytes: p.total_bytes,
        }),
        Ev::ToolFinished(d) => Event::ToolDone(ToolDone {
            id: d.call_id,
            command: d.command,
            exit_code: d.exit_code,
            output_preview: d.output_preview,
            output_lines: d.output_lines,
            output: d.output,
            changes: d
                .changes
                .into_iter()
                .map(|c| FileChange {
                    path: c.path,
                    hunks: c.hunks,
                    added: c.added,
                    removed: c.removed,
                })
                .collect(),
        }),
        Ev::Plan(p) => Event::Plan(
            p.entries
                .into_iter()
                .map(|e| {
                    Ok(PlanEntry {
                        content: e.content,
                        status: PlanStatus::parse(&e.status)?,
                        priority: PlanPriority::parse(&e.priority)?,
                    })
                })
                .collect::<Result<_, WireError>>()?,
        ),
        Ev::Usage(u) => Event::Usage(usage_from_wire(Some(u))),
        Ev::Retrying(r) => Event::Retrying(Retrying {
            attempt: r.attempt,
            max_attempts: r.max_attempts,
            delay_ms: r.delay_ms,
            reason: r.reason,
        }),
        Ev::Error(e) => Event::Error(e.message),
        Ev::Notice(n) => Event::Notice(n.text),
        Ev::Approval(q) => Event::Question(Question::Approval(ApprovalQuestion {
            id: q.request_id,
            call_id: q.call_id,
            title: q.title,
            detail: q.detail,
            options: q
                .options
                .into_iter()
                .map(|o| {
                    Ok(AnswerOption {
                        decision: Decision::parse(&o.decision)?,
                        label: o.label,
                    })
                })
                .collect::<Result<_, WireError>>()?,
            pattern: q.pattern,
            rules_file: q.rules_file,
        })),
        Ev::Elicitation(q) => Event::Question(Question::Form(FormQuestion {
            id: q.request_id,
            server: q.server,
            message: q.message,
            schema_json: q.schema_json,
            url: q.url,
        })),
        Ev::QuestionClosed(c) => Event::QuestionClosed(QuestionClosed {
            id: c.request_id,
            answer: c.answer,
            why: ClosedWhy::parse(&c.why)?,
        }),
        Ev::EnhanceReport(r) => Event::EnhanceReport(r.text),
        Ev::ModelChanged(m) => Event::ModelChanged(m.model),
        Ev::PermissionMode(m) => Event::ModeChanged {
            mode: m.mode,
            summary: m.summary,
        },
        Ev::Assistant(a) => Event::Assistant(AssistantMessage {
            message_id: a.message_id,
            model: a.model,
            content_json: a.content_json,
            stop_reason: a.stop_reason,
            usage: usage_from_wire(a.usage),
            duration_ms: a.duration_ms,
        }),
        Ev::ToolResults(r) => Event::ToolResults(r.content_json),
        Ev::TurnFinished(t) => Event::TurnEnded(TurnEnded {
            reason: StopReason::parse(&t.reason),
            message: t.message,
            final_text: t.final_text,
            turn: t.turn,
            usage: usage_from_wire(t.usage),
            error_kind: t.error_kind,
            http_status: t.http_status,
            background_jobs: t.background_jobs,
        }),
        Ev::FileRequest(r) => Event::FileRequest(FileRequest {
            id: r.request_id,
            op: FileOp::parse(&r.op)?,
            path: r.path,
            content: r.content,
        }),
    })
}

fn usage_to_wire(u: Usage) -> proto::UsageUpdate {
    proto::UsageUpdate {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_creation_tokens: u.cache_creation_tokens,
        context_tokens: u.context_tokens,
        context_window: u.context_window,
        context_source: u.context_source,
    }
}

fn usage_from_wire(u: Option<proto::UsageUpdate>) -> Usage {
    let u = u.unwrap_or_default();
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_creation_tokens: u.cache_creation_tokens,
        context_tokens: u.context_tokens,
        context_window: u.context_window,
        context_source: u.context_source,
    }
}
