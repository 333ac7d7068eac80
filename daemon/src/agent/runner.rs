//! AgentRunner: the one loop shared by the main agent and sub-agents. A turn sends the history
//! with the single `Bash` tool, streams the answer, runs each tool call through the injected
//! [`ToolExecutor`], appends the results, and repeats until the model stops asking for tools, the
//! iteration or failure limit is hit, the call fails, or the turn is cancelled.
//!
//! A failed call ends the turn with [`TurnEnd::Error`] and an empty result. A reply cut by the
//! output limit ends as [`TurnEnd::Truncated`]; when the cut fell inside a tool call's
//! arguments, nothing runs and the model is asked once to send the call again.
//!
//! Before every model request (the first of a turn and each one between tool calls) the
//! injected [`ContextKeeper`] may shrink the history to fit the model's window; after every
//! answer it learns the usage the server reported.
//!
//! Every message is handed to the caller's `persist` as soon as it is final, so the session file
//! always holds the conversation up to the last completed step. A tool call runs only after its
//! model call has completed, and a failed call is never retried here, so no command runs twice.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, TurnEnd, TurnFailure};
use super::executor::{BashCall, ToolExecutor};
use super::history;
use synapse_llm::{
    BashInput, ContentBlock, LlmEvent, LlmProvider, LlmRequest, Message, Role, StopReason,
    ToolResult, TurnBuilder, Usage,
};

/// Model calls allowed in one turn.
pub const MAX_ITERATIONS_DEFAULT: u32 = 50;
/// Tool calls that may fail in a row before the turn stops.
pub const MAX_CONSECUTIVE_FAILURES_DEFAULT: u32 = 8;

#[derive(Debug, Clone)]
pub struct RunnerLimits {
    pub max_iterations: u32,
    pub max_consecutive_failures: u32,
    pub max_tokens: u32,
    /// Model requests the caller's budget still allows (`synapse run --max-turns`): reaching it
    /// ends the turn as [`TurnEnd::MaxTurns`] instead of [`TurnEnd::MaxIterations`].
    pub max_turns: Option<u32>,
    /// `false` for a sub-agent that runs no commands (the skill search): its requests offer no
    /// tool, earlier tool calls in its history reach the model as text, and a tool call it
    /// makes anyway is not run.
    pub offers_bash: bool,
}

impl Default for RunnerLimits {
    fn default() -> Self {
        Self {
            max_iterations: MAX_ITERATIONS_DEFAULT,
            max_consecutive_failures: MAX_CONSECUTIVE_FAILURES_DEFAULT,
            max_tokens: synapse_llm::config::MAX_OUTPUT_TOKENS_DEFAULT,
            max_turns: None,
            offers_bash: true,
        }
    }
}

/// The result of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    pub end: TurnEnd,
    /// The model's text of the last assistant message of the turn.
    pub final_text: String,
    /// Usage of the last model call (its input is the context size).
    pub last_usage: Usage,
    /// Usage summed over the turn's model calls.
    pub total_usage: Usage,
    /// The largest input (cached or not) of one of the turn's model calls: how full the
    /// context window got.
    pub peak_input: u64,
    /// Model requests the turn made.
    pub requests: u32,
}

impl TurnOutcome {
    /// A turn cancelled before its first model call.
    pub fn cancelled() -> Self {
        Self {
            end: TurnEnd::Cancelled,
            final_text: String::new(),
            last_usage: Usage::default(),
            total_usage: Usage::default(),
            peak_input: 0,
            requests: 0,
        }
    }
}

/// Asked when the model ends a turn (answers without tool calls). A reminder it returns is
/// sent to the model as a user message and the turn goes on; the runner asks at most once per
/// turn, so a model that ends again really ends. The session supplies it (the todo list's
/// unfinished items, say); the runner knows nothing of what it checks.
pub trait TurnGuard: Send + Sync {
    fn before_end(&self) -> Option<String>;
}

/// Keeps the context inside the model's window. The runner asks before every model request
/// (also between the tool calls of one turn) and reports each answer's usage; the session
/// supplies it (its [`crate::agent::session`] compactor), the runner knows nothing of how it
/// compacts. A keeper never separates a tool call from its result and leaves the latest
/// messages as they are, so the turn goes on coherently.
pub trait ContextKeeper: Send + Sync {
    /// May rewrite `history` (offload, summarise) before the next request is built from it.
    fn before_request<'a>(&'a self, history: &'a mut Vec<Message>) -> BoxFuture<'a, ()>;
    /// The server's usage for the call whose answer ends the first `messages` messages.
    fn reported(&self, usage: Usage, messages: usize);
}

pub struct AgentRunner {
    pub provider: Arc<dyn LlmProvider>,
    pub executor: Arc<dyn ToolExecutor>,
    pub model: String,
    pub system: String,
    /// The tools every request carries: `Bash`, or none (`--disallowedTools Bash`).
    pub tools: Vec<synapse_llm::ToolDefinition>,
    pub limits: RunnerLimits,
    /// Checked once per turn when the model tries to end it.
    pub guard: Option<Arc<dyn TurnGuard>>,
    /// Asked before every model request; `None` sends the history as it is (sub-agents).
    pub context: Option<Arc<dyn ContextKeeper>>,
    /// The user's hooks around each tool call and at the turn's end (`None`: none).
    pub hooks: Option<Arc<crate::hooks::SessionHooks>>,
}

impl AgentRunner {
    /// True when the requests carry the tool: the role uses it (`limits.offers_bash`) and the
    /// session has it (`--disallowedTools Bash` leaves `tools` empty).
    fn offers_tool(&self) -> bool {
        self.limits.offers_bash && !self.tools.is_empty()
    }

    /// Runs one turn on `history` (which gets the new messages). `emit` sees progress;
    /// `persist` gets each final message in order.
    pub async fn run_turn(
        &self,
        history: &mut Vec<Message>,
        input: Message,
        cancel: &CancellationToken,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
        persist: &mut (dyn FnMut(&Message) + Send),
    ) -> TurnOutcome {
        persist(&input);
        history.push(input);
        self.continue_turn(history, cancel, emit, persist).await
    }

    /// Runs the turn on from the history as it is (its last message is the user's or tool
    /// results): after compaction the session retries a turn the server rejected as too long.
    pub async fn continue_turn(
        &self,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
        persist: &mut (dyn FnMut(&Message) + Send),
    ) -> TurnOutcome {
        let mut outcome = TurnOutcome {
            end: TurnEnd::Completed,
            final_text: String::new(),
            last_usage: Usage::default(),
            total_usage: Usage::default(),
            peak_input: 0,
            requests: 0,
        };
        let mut failures_in_a_row = 0u32;
        let mut reminded = false;
        let mut stop_continuations = 0u32;
        let mut continued_cut_call = false;
        let budget = self.limits.max_turns.unwrap_or(u32::MAX);
        let requests = self.limits.max_iterations.min(budget);
        for _ in 0..requests {
            if let Some(keeper) = &self.context {
                keeper.before_request(history).await;
            }
            let (tools, messages) = if self.offers_tool() {
                (self.tools.clone(), history::normalized(history))
            } else {
                (
                    Vec::new(),
                    history::tools_as_text(history::normalized(history)),
                )
            };
            let request = LlmRequest {
                model: self.model.clone(),
                system: self.system.clone(),
                messages,
                tools,
                max_tokens: self.limits.max_tokens,
            };
            let started = std::time::Instant::now();
            outcome.requests += 1;
            let streamed = self.stream_one(request, cancel, emit).await;
            let (turn, end) = match streamed {
                Ok(turn) => (turn, None),
                Err((partial, end)) => (partial, Some(end)),
            };
            let cut = turn.stop_reason() == Some(&StopReason::MaxTokens);
            let message = turn.message();
            // A broken or cancelled call keeps its text but never its tool calls; so does a
            // call cut in the middle of a tool call's arguments.
            let cut_call = cut && has_cut_tool_call(&message);
            let message = if end.is_some() || cut_call || !self.offers_tool() {
                text_only(&message)
            } else {
                message
            };
            let streamed_text = message.text();
            if end.is_none() {
                emit(AgentEvent::AssistantMessage {
                    id: super::events::message_id(),
                    model: self.model.clone(),
                    content: message.content.clone(),
                    stop_reason: super::events::stop_reason_word(turn.stop_reason()),
                    usage: turn.usage(),
                    duration: started.elapsed(),
                });
            }
            if !message.content.is_empty() {
                persist(&message);
                history.push(message);
            }
            if let Some(end) = end {
                // The result of a failed turn is the failure, never an earlier message (the
                // user's own prompt was once printed as the answer).
                outcome.final_text = match end {
                    TurnEnd::Error(_) => String::new(),
                    _ => streamed_text,
                };
                outcome.end = end;
                return outcome;
            }
            let usage = turn.usage();
            if let Some(keeper) = &self.context {
                keeper.reported(usage, history.len());
            }
            outcome.total_usage += usage;
            outcome.peak_input = outcome.peak_input.max(usage.total_input());
            outcome.last_usage = usage;
            emit(AgentEvent::Usage(usage));
            if cut_call {
                if continued_cut_call {
                    outcome.end = TurnEnd::Truncated(self.limits.max_tokens);
                    outcome.final_text = streamed_text;
                    return outcome;
                }
                // Once per turn: tell the model its call was cut and nothing ran.
                continued_cut_call = true;
                emit(AgentEvent::Notice(format!(
                    "The model's tool call was cut at the output limit ({} tokens); asking it \
                     to send the call again.",
                    self.limits.max_tokens
                )));
                let message = Message::user_text(cut_call_note(self.limits.max_tokens));
                persist(&message);
                history.push(message);
                continue;
            }
            let calls: Vec<(String, String, serde_json::Value)> = match history.last() {
                Some(m) if m.role == Role::Assistant => m
                    .tool_uses()
                    .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
                    .collect(),
                _ => Vec::new(),
            };
            outcome.final_text = streamed_text;
            if calls.is_empty() {
                if cut {
                    outcome.end = TurnEnd::Truncated(self.limits.max_tokens);
                    return outcome;
                }
                // One reminder per turn, then the model's choice to end stands.
                let reminder = match (&self.guard, reminded) {
                    (Some(guard), false) => guard.before_end(),
                    _ => None,
                };
                let Some(reminder) = reminder else {
                    let Some(reason) = self
                        .stop_hooks(&mut stop_continuations, &outcome.final_text, cancel, emit)
                        .await
                    else {
                        return outcome;
                    };
                    let message = Message::user_text(format!(
                        "<system-reminder>\nA Stop hook asks you to go on before ending your \
                         turn:\n{reason}\n</system-reminder>"
                    ));
                    persist(&message);
                    history.push(message);
                    continue;
                };
                reminded = true;
                emit(AgentEvent::Notice(
                    "The model was reminded of unfinished work before ending the turn.".into(),
                ));
                let message = Message::user_text(reminder);
                persist(&message);
                history.push(message);
                continue;
            }
            let mut results = Vec::with_capacity(calls.len());
            let mut stopped_by_hook = None;
            for (id, name, input) in calls {
                if cancel.is_cancelled() || stopped_by_hook.is_some() {
                    let why = if cancel.is_cancelled() {
                        "[cancelled by the user before it ran]"
                    } else {
                        "[not run: a hook stopped the turn]"
                    };
                    results.push(ToolResult {
                        tool_use_id: id,
                        content: why.into(),
                        is_error: true,
                        images: Vec::new(),
                    });
                    continue;
                }
                let (result, stop) = self.run_tool(&id, &name, &input, cancel, emit).await;
                if let Some(reason) = stop {
                    emit(AgentEvent::Notice(format!(
                        "A hook stopped the turn: {reason}"
                    )));
                    stopped_by_hook = Some(reason);
                }
                if result.is_error {
                    failures_in_a_row += 1;
                } else {
                    failures_in_a_row = 0;
                }
                results.push(result);
            }
            let message = Message::tool_results(results);
            emit(AgentEvent::ToolResults(message.content.clone()));
            persist(&message);
            history.push(message);
            if cancel.is_cancelled() {
                outcome.end = TurnEnd::Cancelled;
                return outcome;
            }
            if stopped_by_hook.is_some() {
                return outcome;
            }
            if failures_in_a_row >= self.limits.max_consecutive_failures {
                outcome.end = TurnEnd::TooManyFailures(failures_in_a_row);
                return outcome;
            }
        }
        outcome.end = if budget < self.limits.max_iterations {
            TurnEnd::MaxTurns(budget)
        } else {
            TurnEnd::MaxIterations(self.limits.max_iterations)
        };
        outcome
    }

    /// Runs a turn with no progress events and returns the final text (sub-agents).
    pub async fn run_silent(
        &self,
        history: &mut Vec<Message>,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        self.run_turn(
            history,
            Message::user_text(prompt),
            cancel,
            &mut |_| {},
            &mut |_| {},
        )
        .await
    }

    /// One model call; on failure returns what had arrived and why it ended.
    async fn stream_one(
        &self,
        request: LlmRequest,
        cancel: &CancellationToken,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnBuilder, (TurnBuilder, TurnEnd)> {
        let mut turn = TurnBuilder::new();
        let mut stream = match self.provider.stream(request) {
            Ok(s) => s,
            Err(e) => return Err((turn, TurnEnd::Error(TurnFailure::from_llm(&e)))),
        };
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                _ = cancel.cancelled() => return Err((turn, TurnEnd::Cancelled)),
            };
            match item {
                None => break,
                Some(Err(e)) => return Err((turn, TurnEnd::Error(TurnFailure::from_llm(&e)))),
                Some(Ok(event)) => {
                    turn.push(&event);
                    match event {
                        LlmEvent::TextDelta(text) => emit(AgentEvent::TextDelta(text)),
                        LlmEvent::Retrying {
                            attempt,
                            max_attempts,
                            delay,
                            reason,
                        } => emit(AgentEvent::Retrying {
                            attempt,
                            max_attempts,
                            delay,
                            reason,
                        }),
                        _ => {}
                    }
                }
            }
        }
        if turn.is_complete() {
            Ok(turn)
        } else {
            Err((
                turn,
                TurnEnd::Error(TurnFailure::other(
                    "stream_broken",
                    "the model's answer ended before it was complete",
                )),
            ))
        }
    }

    /// The Stop (or SubagentStop) hooks when the model ends its turn: the reason to go on,
    /// at most [`crate::hooks::STOP_CONTINUATIONS_MAX`] times a turn.
    async fn stop_hooks(
        &self,
        continuations: &mut u32,
        last_text: &str,
        cancel: &CancellationToken,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Option<String> {
        let hooks = self.hooks.as_ref()?;
        let verdict = tokio::select! {
            v = hooks.stop(*continuations > 0, last_text) => v,
            _ = cancel.cancelled() => return None,
        };
        if verdict.stop.is_some() {
            return None;
        }
        let reason = verdict.block?;
        if *continuations >= crate::hooks::STOP_CONTINUATIONS_MAX {
            emit(AgentEvent::Notice(format!(
                "A Stop hook asked the agent to go on again; it already went on {} times this \
                 turn, so the turn ends: {reason}",
                crate::hooks::STOP_CONTINUATIONS_MAX
            )));
            return None;
        }
        *continuations += 1;
        emit(AgentEvent::Notice(format!(
            "A Stop hook keeps the agent going: {reason}"
        )));
        Some(reason)
    }

    /// Runs one tool call between its PreToolUse and PostToolUse hooks; the second value is a
    /// hook's reason to stop the turn (`continue: false`).
    async fn run_tool(
        &self,
        id: &str,
        name: &str,
        input: &serde_json::Value,
        cancel: &CancellationToken,
        emit: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> (ToolResult, Option<String>) {
        let call = match BashInput::from_input(name, input) {
            Ok(c) => c,
            Err(e) => {
                let result = ToolResult {
                    tool_use_id: id.to_string(),
                    content: e.to_string(),
                    is_error: true,
                    images: Vec::new(),
                };
                return (result, None);
            }
        };
        emit(AgentEvent::ToolStarted {
            id: id.to_string(),
            command: call.command.clone(),
        });
        let mut hook = synapse_command::gate::HookPermission::Unsaid;
        let mut pre_context = Vec::new();
        if let Some(hooks) = &self.hooks {
            // A cancelled turn does not wait for its hooks (they are killed with their group).
            let verdict = tokio::select! {
                v = hooks.pre_tool(id, &call.command) => v,
                _ = cancel.cancelled() => {
                    let text = "[cancelled by the user before it ran]".to_string();
                    return (not_run(id, call.command, text, emit), None);
                }
            };
            if let Some(reason) = verdict.block.or(verdict.stop.clone()) {
                let text =
                    format!("[blocked by a PreToolUse hook; the command did not run]\n{reason}");
                return (not_run(id, call.command, text, emit), verdict.stop);
            }
            hook = verdict.permission;
            pre_context = verdict.context;
        }
        let started = std::time::Instant::now();
        let run = self.executor.execute(
            BashCall {
                command: call.command.clone(),
                restart: call.restart,
                hook,
            },
            cancel.child_token(),
        );
        let outcome = run.await;
        let mut content = model_text(outcome.output.clone(), outcome.exit_code);
        let mut stop = None;
        if let Some(hooks) = &self.hooks {
            let verdict = tokio::select! {
                v = hooks.post_tool(id, &call.command, &outcome.output, outcome.exit_code, started.elapsed()) => v,
                _ = cancel.cancelled() => Default::default(),
            };
            for (title, text) in pre_context
                .iter()
                .map(|c| ("PreToolUse hook context", c))
                .chain(
                    verdict
                        .block
                        .iter()
                        .map(|b| ("PostToolUse hook feedback", b)),
                )
                .chain(
                    verdict
                        .context
                        .iter()
                        .map(|c| ("PostToolUse hook context", c)),
                )
            {
                content.push_str(&format!("\n[{title}]\n{text}"));
            }
            stop = verdict.stop;
        }
        emit(AgentEvent::ToolFinished {
            id: id.to_string(),
            command: call.command,
            exit_code: outcome.exit_code,
            output: outcome.output,
            changes: outcome.changes,
        });
        let result = ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error: outcome.exit_code != 0,
            images: outcome.images,
        };
        (result, stop)
    }
}

/// What the model reads for a command's output: a silent success says so, so an empty result
/// is not mistaken for a lost one (a failure already ends with its `[exit code: N]`).
/// A tool call that never ran (a hook blocked it, or the turn was cancelled while its hooks
/// ran): the user sees it finish with `text`, and the model reads `text` as an error.
fn not_run(
    id: &str,
    command: String,
    text: String,
    emit: &mut (dyn FnMut(AgentEvent) + Send),
) -> ToolResult {
    emit(AgentEvent::ToolFinished {
        id: id.to_string(),
        command,
        exit_code: synapse_command::gate::EXIT_REFUSED,
        output: text.clone(),
        changes: Vec::new(),
    });
    ToolResult {
        tool_use_id: id.to_string(),
        content: text,
        is_error: true,
        images: Vec::new(),
    }
}

fn model_text(output: String, exit_code: i32) -> String {
    if exit_code == 0 && output.trim().is_empty() {
        "(no output, exit 0)".to_string()
    } else {
        output
    }
}

/// True when a tool call's input is not a JSON object: its arguments were cut off.
fn has_cut_tool_call(message: &Message) -> bool {
    message.tool_uses().any(|(_, _, input)| !input.is_object())
}

fn cut_call_note(max_tokens: u32) -> String {
    format!(
        "[Your last reply hit the output limit of {max_tokens} tokens in the middle of a tool \
         call, so the call was cut off and nothing ran. Send it again, shorter: split large \
         files into several writes.]"
    )
}

fn text_only(message: &Message) -> Message {
    Message {
        role: message.role,
        content: message
            .content
            .iter()
            .filter(|b| matches!(b, ContentBlock::Text { .. }))
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
