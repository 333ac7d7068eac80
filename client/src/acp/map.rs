//! The session contract in the Agent Client Protocol's words, as pure functions: a
//! [`synapse_session::Event`] becomes the `session/update`s an editor shows, an approval
//! [`Question`](synapse_session::ApprovalQuestion) becomes `session/request_permission`'s options
//! (and the chosen option id maps back to exactly the decision it was offered for), a contract
//! [`StopReason`] becomes ACP's, the editor's prompt blocks become an [`Input`], its MCP servers
//! the session-scoped servers of `OpenSession`. Nothing here does I/O.

use std::path::PathBuf;

use agent_client_protocol::v1::schema as acp;
use synapse_session::{
    AnswerOption, ApprovalQuestion, Decision, Event, FileChange, Input, InputBlock, Mode,
    OptionKind, PlanEntry, PlanPriority, PlanStatus, StopReason, ToolCall, ToolDone, ToolKind,
};
use synapse_shared::proto::SessionMcpServer;

/// A session's `session/update`s for one contract event (none for what an editor has no
/// place for: the session's own bookkeeping).
pub fn updates(event: &Event) -> Vec<acp::SessionUpdate> {
    match event {
        Event::Text(text) => vec![agent_text(text)],
        Event::ToolCall(call) => vec![acp::SessionUpdate::ToolCall(tool_call(call))],
        Event::ToolProgress(p) => vec![acp::SessionUpdate::ToolCallUpdate(
            acp::ToolCallUpdate::new(
                p.id.clone(),
                acp::ToolCallUpdateFields::new()
                    .status(acp::ToolCallStatus::InProgress)
                    .content(vec![text_content(&p.tail)]),
            ),
        )],
        Event::ToolDone(done) => vec![acp::SessionUpdate::ToolCallUpdate(tool_done(done))],
        Event::Plan(entries) => vec![acp::SessionUpdate::Plan(plan(entries))],
        Event::Usage(u) if u.context_window > 0 => vec![acp::SessionUpdate::UsageUpdate(
            acp::UsageUpdate::new(u.context_tokens, u.context_window),
        )],
        Event::ModeChanged { mode, .. } => match Mode::parse(mode) {
            Ok(m) => vec![acp::SessionUpdate::CurrentModeUpdate(
                acp::CurrentModeUpdate::new(m.as_str()),
            )],
            Err(_) => Vec::new(),
        },
        Event::Error(message) => vec![agent_text(&format!("\n\nError: {message}\n\n"))],
        Event::Notice(text) | Event::EnhanceReport(text) => vec![thought(text)],
        Event::Retrying(r) => vec![thought(&format!(
            "Retrying the model request ({}/{}) in {} ms: {}",
            r.attempt, r.max_attempts, r.delay_ms, r.reason
        ))],
        // A question another front end answered first: the editor's pending permission request
        // is dropped by the driver (its answer is no longer sent); nothing to show.
        Event::Usage(_)
        | Event::Opened(_)
        | Event::Question(_)
        | Event::QuestionClosed(_)
        | Event::ModelChanged(_)
        | Event::Assistant(_)
        | Event::ToolResults(_)
        // Answered by the session's task through the editor's `fs`, not shown.
        | Event::FileRequest(_)
        | Event::TurnEnded(_) => Vec::new(),
    }
}

/// A piece of the agent's answer.
pub fn agent_text(text: &str) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text_block(text)))
}

/// A piece of the user's message (history replay).
pub fn user_text(text: &str) -> acp::SessionUpdate {
    acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(text_block(text)))
}

fn thought(text: &str) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentThoughtChunk(acp::ContentChunk::new(text_block(text)))
}

fn text_block(text: &str) -> acp::ContentBlock {
    acp::ContentBlock::Text(acp::TextContent::new(text))
}

fn text_content(text: &str) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(text_block(text)))
}

/// ACP's tool kind for the contract's (they are the same words; `other` for the rest).
pub fn tool_kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Delete => acp::ToolKind::Delete,
        ToolKind::Move => acp::ToolKind::Move,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::Other => acp::ToolKind::Other,
    }
}

/// A starting call: its kind, title (the command when the daemon gave none), the files it
/// touches, and the command line as its raw input.
pub fn tool_call(call: &ToolCall) -> acp::ToolCall {
    let title = if call.title.is_empty() {
        call.command.clone()
    } else {
        call.title.clone()
    };
    acp::ToolCall::new(call.id.clone(), title)
        .kind(tool_kind(call.kind))
        .status(acp::ToolCallStatus::Pending)
        .locations(
            call.locations
                .iter()
                .map(|p| acp::ToolCallLocation::new(PathBuf::from(p)))
                .collect::<Vec<_>>(),
        )
        .raw_input(serde_json::json!({ "command": call.command }))
}

/// A finished call: completed or failed by its exit status, its output, and a diff for each
/// file it changed.
pub fn tool_done(done: &ToolDone) -> acp::ToolCallUpdate {
    let status = if done.exit_code == 0 {
        acp::ToolCallStatus::Completed
    } else {
        acp::ToolCallStatus::Failed
    };
    let mut content: Vec<acp::ToolCallContent> = done
        .changes
        .iter()
        .map(|c| acp::ToolCallContent::Diff(diff(c)))
        .collect();
    if !done.output.is_empty() {
        content.push(text_content(&done.output));
    }
    acp::ToolCallUpdate::new(
        done.id.clone(),
        acp::ToolCallUpdateFields::new()
            .status(status)
            .content(content)
            .raw_output(serde_json::json!({ "exit_code": done.exit_code })),
    )
}

/// A file change as ACP's diff: the changed region before and after, read off the unified
/// hunks (context and removed lines are the old text, context and added lines the new). A file
/// the call created (every hunk starts at `-0,0`) has no old text.
pub fn diff(change: &FileChange) -> acp::Diff {
    let mut old = String::new();
    let mut new = String::new();
    let mut created = true;
    for line in change.hunks.lines() {
        if let Some(header) = line.strip_prefix("@@") {
            created &= header.trim_start().starts_with("-0,0 ");
            continue;
        }
        match line.split_at_checked(1) {
            Some(("-", rest)) => push_line(&mut old, rest),
            Some(("+", rest)) => push_line(&mut new, rest),
            Some((" ", rest)) => {
                push_line(&mut old, rest);
                push_line(&mut new, rest);
            }
            // `\ No newline at end of file` and blank context lines.
            _ if line.is_empty() => {
                push_line(&mut old, "");
                push_line(&mut new, "");
            }
            _ => {}
        }
    }
    let diff = acp::Diff::new(PathBuf::from(&change.path), new);
    if created && !change.hunks.is_empty() {
        diff
    } else {
        diff.old_text(old)
    }
}

fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    text.push('\n');
}

/// The plan, whole.
pub fn plan(entries: &[PlanEntry]) -> acp::Plan {
    acp::Plan::new(
        entries
            .iter()
            .map(|e| {
                acp::PlanEntry::new(
                    e.content.clone(),
                    match e.priority {
                        PlanPriority::High => acp::PlanEntryPriority::High,
                        PlanPriority::Medium => acp::PlanEntryPriority::Medium,
                        PlanPriority::Low => acp::PlanEntryPriority::Low,
                    },
                    match e.status {
                        PlanStatus::Pending => acp::PlanEntryStatus::Pending,
                        PlanStatus::InProgress => acp::PlanEntryStatus::InProgress,
                        PlanStatus::Completed => acp::PlanEntryStatus::Completed,
                    },
                )
            })
            .collect(),
    )
}

/// The options of `session/request_permission` for a gate question: one per answer the gate
/// offers, its option id the decision's word, so the choice maps back exactly.
pub fn permission_options(question: &ApprovalQuestion) -> Vec<acp::PermissionOption> {
    question
        .offered()
        .iter()
        .map(|AnswerOption { decision, label }| {
            acp::PermissionOption::new(
                decision.as_str(),
                label.clone(),
                match decision.kind() {
                    OptionKind::AllowOnce => acp::PermissionOptionKind::AllowOnce,
                    OptionKind::AllowAlways => acp::PermissionOptionKind::AllowAlways,
                    OptionKind::RejectOnce => acp::PermissionOptionKind::RejectOnce,
                },
            )
        })
        .collect()
}

/// The tool call a permission request is about: the model's call (its id), titled with the
/// question, and the question's detail as its content.
pub fn permission_subject(question: &ApprovalQuestion) -> acp::ToolCallUpdate {
    let id = if question.call_id.is_empty() {
        question.id.clone()
    } else {
        question.call_id.clone()
    };
    let mut fields = acp::ToolCallUpdateFields::new().title(question.title.clone());
    if !question.detail.is_empty() {
        fields = fields.content(vec![text_content(&question.detail)]);
    }
    acp::ToolCallUpdate::new(id, fields)
}

/// The decision an editor's answer stands for. Only an option that was offered allows
/// anything: a dismissed request, or an id this question did not offer, is "no" (fail closed).
pub fn decision(question: &ApprovalQuestion, outcome: &acp::RequestPermissionOutcome) -> Decision {
    let acp::RequestPermissionOutcome::Selected(selected) = outcome else {
        return Decision::No;
    };
    question
        .offered()
        .into_iter()
        .map(|o| o.decision)
        .find(|d| d.as_str() == &*selected.option_id.0)
        .unwrap_or(Decision::No)
}

/// How a prompt's turn ended, in ACP's words; `None` for a failed turn, which answers the
/// prompt with an error instead.
pub fn stop_reason(reason: &StopReason) -> Option<acp::StopReason> {
    Some(match reason {
        StopReason::Completed | StopReason::TooManyFailures | StopReason::Other(_) => {
            acp::StopReason::EndTurn
        }
        StopReason::Cancelled => acp::StopReason::Cancelled,
        StopReason::Truncated => acp::StopReason::MaxTokens,
        StopReason::MaxIterations | StopReason::MaxTurns => acp::StopReason::MaxTurnRequests,
        StopReason::Error => return None,
    })
}

/// The session's modes as `session/new` and `session/load` advertise them.
pub fn modes(current: Mode) -> acp::SessionModeState {
    acp::SessionModeState::new(
        current.as_str(),
        Mode::ALL
            .iter()
            .map(|m| acp::SessionMode::new(m.as_str(), mode_name(*m)).description(m.description()))
            .collect(),
    )
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "Ask",
        Mode::Auto => "Auto",
        Mode::ReadOnly => "Read-only",
        Mode::Yolo => "Yolo",
    }
}

/// An editor's prompt as a user message: text, resource links, embedded text resources and
/// images; audio and binary resources are refused with what was sent.
pub fn input(prompt: &[acp::ContentBlock]) -> Result<Input, String> {
    let mut blocks = Vec::with_capacity(prompt.len());
    for block in prompt {
        blocks.push(match block {
            acp::ContentBlock::Text(t) => InputBlock::Text(t.text.clone()),
            acp::ContentBlock::ResourceLink(l) => InputBlock::ResourceLink {
                uri: l.uri.clone(),
                name: l.name.clone(),
            },
            acp::ContentBlock::Image(i) => InputBlock::Image {
                mime_type: i.mime_type.clone(),
                data: i.data.clone(),
            },
            acp::ContentBlock::Resource(r) => match &r.resource {
                acp::EmbeddedResourceResource::TextResourceContents(t) => InputBlock::Resource {
                    uri: t.uri.clone(),
                    mime_type: t.mime_type.clone().unwrap_or_default(),
                    text: t.text.clone(),
                },
                _ => {
                    return Err(
                        "an embedded binary resource cannot be sent to Synapse; attach it as a \
                         file link instead"
                            .into(),
                    );
                }
            },
            acp::ContentBlock::Audio(_) => {
                return Err(
                    "audio prompts are not supported (promptCapabilities.audio is false)".into(),
                );
            }
            _ => return Err("a prompt block of a kind this agent does not know".into()),
        });
    }
    Ok(Input { blocks })
}

/// An editor's MCP server as a session-scoped server of `OpenSession`, in the `mcpServers` shape
/// Claude Code writes (`command`/`args`/`env`, or `type`/`url`/`headers`).
pub fn mcp_server(server: &acp::McpServer) -> Result<SessionMcpServer, String> {
    let (name, config) = match server {
        acp::McpServer::Stdio(s) => (
            &s.name,
            serde_json::json!({
                "command": s.command.display().to_string(),
                "args": s.args,
                "env": s.env.iter().map(|v| (v.name.clone(), serde_json::Value::from(v.value.clone())))
                    .collect::<serde_json::Map<_, _>>(),
            }),
        ),
        acp::McpServer::Http(h) => (&h.name, remote("http", &h.url, &h.headers)),
        acp::McpServer::Sse(h) => (&h.name, remote("sse", &h.url, &h.headers)),
        _ => return Err("an MCP server of a transport this agent does not know".into()),
    };
    if name.trim().is_empty() {
        return Err("an MCP server without a name".into());
    }
    Ok(SessionMcpServer {
        name: name.clone(),
        config_json: config.to_string(),
    })
}

fn remote(kind: &str, url: &str, headers: &[acp::HttpHeader]) -> serde_json::Value {
    serde_json::json!({
        "type": kind,
        "url": url,
        "headers": headers.iter().map(|h| (h.name.clone(), serde_json::Value::from(h.value.clone())))
            .collect::<serde_json::Map<_, _>>(),
    })
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
