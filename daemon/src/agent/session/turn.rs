//! One turn of a chat session: resolve the provider and the model's limits, run the
//! [`AgentRunner`] with the session's [`Compactor`] as its context keeper (it compacts before any
//! model request that would pass 75 % of the window), and when the server rejects the request as
//! too long anyway, offload + compact and try once more. Model errors and retries go to the daemon log
//! with the session id; the turn's end goes to subscribers as `TurnFinished`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::compact::{Compactor, Trigger};
use super::{ChatSession, Conversation, SessionEvent};
use crate::agent::events::{AgentEvent, TurnEnd, TurnFailure};
use crate::agent::runner::{AgentRunner, RunnerLimits, TurnOutcome};
use crate::agent::shell_executor::ShellToolExecutor;
use synapse_command::command::ApproverHandle;
use synapse_llm::{Message, Usage};

impl ChatSession {
    pub(super) async fn run_turn(&self, text: String, cancel: CancellationToken) {
        let mut conv = self.conversation.lock().await;
        let turn = conv.turns + 1;
        // UserPromptSubmit hooks see the prompt as the user typed it (a custom command as
        // `/<name> args`, before any of its `!` lines run): they may block it or add context.
        let mut hook_context = Vec::new();
        if let Some(hooks) = &self.hooks {
            match hooks.user_prompt(&text).await {
                Ok(context) => hook_context = context,
                Err(reason) => {
                    self.finish(SessionEvent::TurnFinished {
                        end: TurnEnd::Error(TurnFailure::other(
                            "hook",
                            format!("a UserPromptSubmit hook blocked the prompt: {reason}"),
                        )),
                        final_text: String::new(),
                        turn,
                        usage: Usage::default(),
                    });
                    return;
                }
            }
        }
        // `/<name> args` for a custom command becomes the command's text (custom_command.rs).
        let (text, _turn_model) = match self.expand_custom_command(text, &cancel).await {
            Ok(expanded) => (expanded.text, self.use_turn_model(expanded.model)),
            Err(message) => {
                self.finish(SessionEvent::TurnFinished {
                    end: TurnEnd::Error(TurnFailure::other("command", message)),
                    final_text: String::new(),
                    turn,
                    usage: Usage::default(),
                });
                return;
            }
        };
        let sent = with_hook_context(text.clone(), &hook_context);
        let provider = match self.provider(&mut conv) {
            Ok(p) => p,
            Err(message) => {
                tracing::warn!(session = %self.id, error = %message, "no model provider");
                self.finish(SessionEvent::TurnFinished {
                    end: TurnEnd::Error(TurnFailure::other("config", message.to_string())),
                    final_text: String::new(),
                    turn,
                    usage: Usage::default(),
                });
                return;
            }
        };
        let limits = self.current_limits().await;
        let window = limits.context_window;
        // Rendered once for the whole turn: every request of it sends the same bytes.
        let system = crate::agent::turn_prompt::render_for_turn(
            &self.deps.system_prompt,
            &conv.history,
            &text,
        )
        .await;
        let system = self.run_prompt(system);
        let compactor = Arc::new(
            Compactor::new(
                &self.id,
                provider.clone(),
                system.clone(),
                &limits,
                conv.log.path(),
                self.events.clone(),
                conv.context_mark,
            )
            .with_hooks(self.hooks.clone()),
        );
        let origin = self.shell_origin();
        self.deps.shell.warm_up(&self.id, &origin);
        // The id of the tool call running now, for its live output (calls run one at a time).
        let running_call: RunningCall = Arc::default();
        let runner = AgentRunner {
            model: provider.model().to_string(),
            provider: provider.clone(),
            executor: Arc::new(ShellToolExecutor {
                sessions: self.deps.shell.clone(),
                name: self.id.clone(),
                origin,
                approver: Some(ApproverHandle(self.approver.clone())),
                gate: self.gate.clone().map(crate::agent::gate::handle),
                // Tool output never takes more than about a quarter of the real window.
                output_cap: Some(crate::shell::cap_for_window(Some(window))),
                progress: Some(self.progress_sink(running_call.clone())),
                asker: Some(self.turn_asker(provider.clone(), limits.max_output_tokens)),
            }),
            system,
            limits: RunnerLimits {
                max_tokens: limits.max_output_tokens,
                max_turns: self.requests_left(),
                ..self.deps.limits.clone()
            },
            guard: self.deps.turn_guard.clone(),
            context: Some(compactor.clone()),
            hooks: self.hooks.clone(),
        };
        let mut outcome = self
            .run_step(&runner, &mut conv, Some(sent), &cancel, &running_call)
            .await;
        if is_overflow(&outcome) && !cancel.is_cancelled() {
            tracing::warn!(session = %self.id, window, "request too long for the model; compacting and retrying once");
            let _ = self.events.send(SessionEvent::Agent(AgentEvent::Notice(
                "The request was too long for the model's context window; compacting and trying again."
                    .into(),
            )));
            if let Some(notice) = compactor
                .compact(&mut conv.history, Trigger::Overflow)
                .await
            {
                let _ = self.events.send(notice);
            }
            let (first, requests) = (outcome.total_usage, outcome.requests);
            outcome = self
                .run_step(&runner, &mut conv, None, &cancel, &running_call)
                .await;
            outcome.total_usage += first;
            outcome.requests += requests;
        }
        if let TurnEnd::Error(failure) = &mut outcome.end {
            // A server may echo the key it rejected: it never reaches the log, the session
            // file or the client.
            if let Ok(config) = self.resolve_config()
                && let Some(key) = config.api_key.as_ref().map(|k| k.expose())
                && !key.is_empty()
            {
                failure.message = failure.message.replace(key, "<redacted>");
            }
            tracing::error!(
                session = %self.id,
                kind = %failure.kind,
                status = failure.status.unwrap_or(0),
                error = %failure.message,
                "model call failed"
            );
        }
        self.spend_requests(outcome.requests, &mut outcome.end);
        conv.turns = turn;
        self.turns_done.store(turn, Ordering::Relaxed);
        conv.context_mark = compactor.mark();
        // Compaction rewrote the history under the per-message count.
        self.message_count
            .store(conv.history.len(), Ordering::Relaxed);
        conv.total_usage += outcome.total_usage;
        drop(conv);
        if matches!(outcome.end, TurnEnd::Completed) && !cancel.is_cancelled() {
            self.run_stop_hook(&cancel).await;
        }
        self.finish(SessionEvent::TurnFinished {
            end: outcome.end,
            final_text: outcome.final_text,
            turn,
            usage: outcome.total_usage,
        });
    }

    /// Sends the live tail of a running command to the session's clients.
    fn progress_sink(&self, running_call: RunningCall) -> crate::shell::ProgressSink {
        let events = self.events.clone();
        crate::shell::ProgressSink::new(move |tail, total_bytes| {
            let id = running_call.lock().clone();
            let _ = events.send(SessionEvent::Agent(AgentEvent::ToolOutput {
                id,
                tail,
                total_bytes,
            }));
        })
    }

    /// Runs the turn with the user's `text`, or continues it from the history (`None`).
    async fn run_step(
        &self,
        runner: &AgentRunner,
        conv: &mut Conversation,
        text: Option<String>,
        cancel: &CancellationToken,
        running_call: &RunningCall,
    ) -> TurnOutcome {
        let events = self.events.clone();
        let id = self.id.clone();
        let mut emit = |ev: AgentEvent| {
            if let AgentEvent::ToolStarted { id, .. } = &ev {
                running_call.lock().clone_from(id);
            }
            if let AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } = &ev
            {
                tracing::warn!(session = %id, attempt, max_attempts, ?delay, %reason, "model call retried");
            }
            let _ = events.send(SessionEvent::Agent(ev));
        };
        let Conversation { history, log, .. } = conv;
        let mut write_failed = false;
        let message_count = &self.message_count;
        let mut persist = |m: &Message| {
            message_count.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = log.append("message", m) {
                tracing::error!("{e}");
                if !write_failed {
                    write_failed = true;
                    let _ = self.events.send(SessionEvent::Error(format!(
                        "{e}. The conversation goes on, but this session cannot be resumed past this point."
                    )));
                }
            }
        };
        match text {
            Some(text) => {
                runner
                    .run_turn(
                        history,
                        Message::user_text(text),
                        cancel,
                        &mut emit,
                        &mut persist,
                    )
                    .await
            }
            None => {
                runner
                    .continue_turn(history, cancel, &mut emit, &mut persist)
                    .await
            }
        }
    }
}

/// The id of the tool call running now, shared by the turn's events and its progress sink.
type RunningCall = Arc<parking_lot::Mutex<String>>;

/// The prompt as sent: the hooks' context follows it, marked as not the user's words.
fn with_hook_context(prompt: String, context: &[String]) -> String {
    if context.is_empty() {
        return prompt;
    }
    format!(
        "{prompt}\n\n<system-reminder>\nContext from the user's hooks:\n{}\n</system-reminder>",
        context.join("\n\n")
    )
}

fn is_overflow(outcome: &TurnOutcome) -> bool {
    matches!(&outcome.end, TurnEnd::Error(f) if f.kind == "context_overflow")
}
