//! One live chat session ([`ChatSession`], all of its behaviour in this file): its history, its
//! session file, the running turn and the broadcast of its events. A session outlives the
//! client that opened it: clients subscribe to its events, and a client that comes back (resume
//! by id) subscribes again.
//!
//! **A turn** (`run_turn` → `run_step`): resolve the provider and the model's limits, run the
//! [`AgentRunner`] with the session's `Compactor` as its context keeper (it compacts before any
//! model request that would pass 75 % of the window), and when the server rejects the request as
//! too long anyway, offload + compact and try once more. Model errors and retries go to the
//! daemon log with the session id; the turn's end goes to subscribers as `TurnFinished`.
//!
//! **Permissions as the clients see them:** the choices an attaching client makes (mode, extra
//! allow patterns, interactivity), `/permissions` and its summary; the decisions themselves are
//! the session gate's ([`crate::agent::gate`]). **What MCP servers ask the user** while its tool
//! calls run: each turn hands its calls a [`TurnAsker`] (the session's forms and approvals, the
//! turn's model and output limit); a client's answer to a form comes back through
//! [`ChatSession::answer_elicitation`].
//!
//! The parts with a concept of their own are their own types beside it: which model and its
//! limits (`model.rs`, `SessionModel`), a `synapse run` client's prompt and request budget
//! (`run_options.rs`, `RunBudget`), compaction (`compact.rs`, `Compactor`), custom slash commands
//! (`custom_command.rs`) and what a session is built from (`deps.rs`).

mod compact;
mod custom_command;
mod deps;
mod fallback;
mod model;
mod run_options;

pub use deps::{LlmProviders, ProviderFactory, SessionDeps};
pub use run_options::RunOptions;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use tokio::sync::broadcast;

use super::room::{RoomState, SessionRoom};
use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::approvals::{RunningCall, SessionApprover};
use super::events::{AgentEvent, TurnEnd, TurnFailure};
use super::forms::SessionForms;
use super::gate::audit::Audit;
use super::gate::{GateOptions, SessionGate};

use super::session_log::SessionLog;
use crate::agent::asker::TurnAsker;
use crate::agent::runner::{AgentRunner, RunnerLimits, TurnOutcome};
use crate::agent::shell_executor::ShellToolExecutor;
use crate::agent::turn_prompt::{self, SessionPrompt};
use crate::shell::AskerHandle;
use crate::shell::SessionOrigin;
use compact::{Compactor, Trigger};
use synapse_command::ApproverHandle;
use synapse_llm::{ConfigError, LlmProvider, Message, ProviderConfig, Usage};
use synapse_permissions::Mode;

/// Events buffered per session for slow subscribers.
pub const EVENT_BUFFER: usize = 256;

/// What subscribers of a session see.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    Agent(AgentEvent),
    /// Something needs the user's yes or no (answered with [`ChatSession::answer_approval`]).
    Approval {
        id: String,
        /// The tool call it is about ("" when asked outside one).
        call_id: String,
        title: String,
        detail: String,
        /// The answers it takes, in order.
        options: Vec<synapse_session::AnswerOption>,
        /// The rule an "always" answer saves, and its file (empty: "always" = this session).
        pattern: String,
        rules_file: String,
    },
    /// An MCP server asks the user to fill in a form (answered with
    /// [`ChatSession::answer_elicitation`]).
    Elicitation {
        id: String,
        server: String,
        message: String,
        /// The requested schema as JSON, in the server's order.
        schema_json: String,
        /// URL mode: the page to open (empty for a form).
        url: String,
    },
    /// Something the user should know that is not part of the conversation (denied commands
    /// of a non-interactive run, problems in the permission rules).
    Notice(String),
    /// The session's permission mode, and a summary of what it allows.
    PermissionMode {
        mode: String,
        summary: String,
    },
    Error(String),
    TurnFinished {
        end: TurnEnd,
        final_text: String,
        turn: u32,
        usage: Usage,
        /// The largest input tokens of one of the turn's model requests.
        peak_input: u64,
    },
    /// The skill enhancer's report, sent just before the turn's `TurnFinished`.
    EnhanceReport(String),
    /// The session's plan (its todo list) changed: the whole plan.
    Plan(Vec<synapse_session::PlanEntry>),
    /// A question (`Approval`, `Elicitation`) is no longer open: answered (the first answer
    /// wins), timed out, or withdrawn; front ends take its prompt down.
    QuestionClosed {
        id: String,
        /// The deciding answer's word (a decision or a form action).
        answer: String,
        why: synapse_session::ClosedWhy,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("a turn is already running in this session; cancel it first")]
    Busy,
}

pub(super) struct Conversation {
    pub history: Vec<Message>,
    pub log: SessionLog,
    /// The same conversation in Claude Code's transcript format, for hooks.
    pub transcript: super::transcript::Transcript,
    pub turns: u32,
    /// What the server last reported about the context (`None` for a resumed session and after
    /// a compaction: then the history is estimated).
    pub context_mark: Option<super::context::ContextMark>,
    pub total_usage: Usage,
    provider: Option<(ProviderConfig, Arc<dyn LlmProvider>)>,
    /// The system prompt, fixed at the session's first turn (`None` before it).
    prompt: Option<Arc<dyn SessionPrompt>>,
    /// What the log last kept of it (a `prompt` record; read back when the session resumes).
    prompt_saved: Option<serde_json::Value>,
}

pub struct ChatSession {
    pub id: String,
    pub cwd: PathBuf,
    /// The session's log (the conversation's file never moves).
    session_file: PathBuf,
    env: HashMap<String, String>,
    /// Which model its turns use, and that model's limits.
    model: model::SessionModel,
    /// Its front ends: every event goes out through it, and it keeps what is open in the turn.
    events: SessionRoom,
    approver: Arc<SessionApprover>,
    /// Forms MCP servers asked the user to fill in, waiting for an answer.
    forms: Arc<SessionForms>,
    gate: Option<Arc<SessionGate>>,
    /// The user's hooks for this session (`None`: hooks are not wired, as in unit tests).
    hooks: Option<Arc<crate::hooks::SessionHooks>>,
    running: Mutex<Option<CancellationToken>>,
    conversation: tokio::sync::Mutex<Conversation>,
    deps: SessionDeps,
    /// When the last piece of work ended (or the session opened).
    idle_since: Mutex<std::time::Instant>,
    /// Mirrors of the conversation's counts, readable while a turn holds it.
    turns_done: AtomicU32,
    message_count: AtomicUsize,
    /// The attached `synapse run` client's prompt and request budget.
    run: run_options::RunBudget,
    /// The editor front end whose files `read`/`write`/`edit` use (none: the disk).
    editor: super::editor_link::EditorSlot,
}

impl ChatSession {
    pub(super) fn new(
        id: String,
        cwd: PathBuf,
        env: HashMap<String, String>,
        model: Option<String>,
        history: Vec<Message>,
        log: SessionLog,
        deps: SessionDeps,
    ) -> Self {
        let turns = history.iter().filter(|m| is_user_prompt(m)).count() as u32;
        let events = SessionRoom::new(EVENT_BUFFER);
        let transcript = super::transcript::Transcript::open(
            log.path().parent().unwrap_or(Path::new(".")),
            &id,
            &cwd,
            model.as_deref().unwrap_or_default(),
        );
        let hooks = deps.hooks.as_ref().map(|daemon_hooks| {
            let notices = events.clone();
            daemon_hooks.session(crate::hooks::SessionFacts {
                session_id: id.clone(),
                transcript_path: transcript.path().to_path_buf(),
                cwd: cwd.clone(),
                root: deps.workspace.as_ref().map(|w| w.root.clone()),
                env: env.clone(),
                notify: Arc::new(move |text| {
                    let _ = notices.send(SessionEvent::Notice(text));
                }),
            })
        });
        let mut approver = SessionApprover::new(id.clone(), events.clone());
        if let Some(hooks) = &hooks {
            approver = approver.with_on_ask(notify_hooks(hooks));
        }
        let approver = Arc::new(approver);
        let forms = Arc::new(SessionForms::new(id.clone(), events.clone()));
        let message_count = AtomicUsize::new(history.len());
        let gate = deps.gate_env.clone().map(|env| {
            let audit = Arc::new(Audit::new(id.clone(), Some(log.path().to_path_buf())));
            let notices = events.clone();
            let notify: Arc<dyn Fn(String) + Send + Sync> = Arc::new(move |text| {
                let _ = notices.send(SessionEvent::Notice(text));
            });
            let (gate, _) = SessionGate::new(
                env,
                cwd.clone(),
                GateOptions::default(),
                approver.clone(),
                audit,
                notify,
            );
            // A spare shell of the workspace started in this folder is this session's if
            // nothing else differs: its gate takes the spare's temporary folder.
            let reserved = deps
                .workspace
                .as_ref()
                .and_then(|w| deps.shell.claim_spare_tmp(&w.root, &cwd));
            Arc::new(gate.with_private_tmp_in(reserved))
        });
        Self {
            hooks,
            session_file: log.path().to_path_buf(),
            gate,
            idle_since: Mutex::new(std::time::Instant::now()),
            turns_done: AtomicU32::new(turns),
            message_count,
            run: Default::default(),
            editor: Default::default(),
            id,
            cwd,
            env,
            model: model::SessionModel::new(model),
            events,
            approver,
            forms,
            running: Mutex::new(None),
            conversation: tokio::sync::Mutex::new(Conversation {
                history,
                log,
                transcript,
                turns,
                context_mark: None,
                total_usage: Usage::default(),
                provider: None,
                prompt: None,
                prompt_saved: None,
            }),
            deps,
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    /// Sends `event` to the session's clients (a subsystem's news: its plan changed).
    pub fn publish(&self, event: SessionEvent) {
        let _ = self.events.send(event);
    }

    /// Clients receiving this session's events now.
    pub fn client_count(&self) -> usize {
        self.events.receiver_count()
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_some()
    }

    /// The MCP servers the session was opened with for itself.
    pub fn own_mcp(&self) -> &super::sessions::OwnMcpServers {
        &self.deps.own_mcp
    }

    /// Completed turns and messages so far.
    pub fn counts_now(&self) -> (u32, usize) {
        (
            self.turns_done.load(Ordering::Relaxed),
            self.message_count.load(Ordering::Relaxed),
        )
    }

    /// The model this session uses (override, else settings/environment).
    pub fn model(&self) -> String {
        match self.resolve_config() {
            Ok(c) => c.model,
            Err(_) => self.model.chosen().unwrap_or_default(),
        }
    }

    /// Where and how the session's shell runs: its folder, environment and sandbox.
    fn shell_origin(&self) -> SessionOrigin {
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = if self.env.is_empty() {
            std::env::vars_os().collect()
        } else {
            self.env.iter().map(|(k, v)| (k.into(), v.into())).collect()
        };
        // The session's private temporary folder (issue 16), the only one its sandbox writes.
        if let Some(tmp) = self.gate.as_ref().and_then(|g| g.temp_dir()) {
            env.retain(|(k, _)| k != "TMPDIR");
            env.push(("TMPDIR".into(), tmp.into()));
        }
        SessionOrigin {
            cwd: self.cwd.clone(),
            env,
            sandbox: self.gate.as_ref().and_then(|g| g.sandbox_spec()),
            workspace: self.deps.workspace.clone(),
            private_tmp: self.gate.as_ref().and_then(|g| g.private_temp_dir()),
            spare_tmp: self.gate.as_ref().and_then(|g| g.tmp_maker()),
        }
    }

    /// The root of the workspace the session is bound to.
    pub fn workspace_root(&self) -> Option<&Path> {
        self.deps.workspace.as_ref().map(|w| w.root.as_path())
    }

    /// The instruction files this session was given so far (its prompt's, then nested ones).
    pub fn instruction_files(&self) -> Vec<crate::workspace::instructions::InstructionFile> {
        self.deps
            .workspace
            .as_ref()
            .map(|w| w.instructions.given(&self.id))
            .unwrap_or_default()
    }

    /// What the session's instruction files left out (a FIFO, a credential store imported, binary
    /// content), as notices for the user.
    pub fn instruction_notices(&self) -> Vec<String> {
        self.deps
            .workspace
            .as_ref()
            .map(|w| w.instructions.skipped(&self.id))
            .unwrap_or_default()
    }

    /// A client opened (`startup`) or resumed (`resume`) the session: its `SessionStart` hooks
    /// run now, and the next turn waits for them (their output goes with its prompt).
    pub fn hooks_session_start(&self, source: &'static str) {
        if let Some(hooks) = &self.hooks {
            hooks.start_in_background(source);
        }
    }

    /// Starts the session's shell in the background, so the first command finds it running
    /// (a client attaching calls this; a turn does it again, which costs nothing).
    pub fn warm_shell(&self) {
        self.deps.shell.warm_up(&self.id, &self.shell_origin());
    }

    /// A client's answer to an approval request.
    pub fn answer_approval(&self, request_id: &str, decision: &str) -> bool {
        self.approver.answer(request_id, decision)
    }

    /// A front end's stream closed (it exited, was killed, or lost the connection). While
    /// another front end is attached, nothing changes: the turn goes on and they answer its
    /// questions. The last one leaving an attached turn cancels it if it was non-interactive
    /// (`synapse run`: its command killed) and answers open approval requests "no" and open forms
    /// "cancel". A detached turn (`synapse run --detach`) goes on, its questions waiting for the
    /// next front end.
    pub fn client_left(&self, non_interactive: bool) {
        // This client's own event forwarder may still hold a receiver.
        let others_attached = self.events.receiver_count() > 1;
        if others_attached || self.events.is_detached() {
            return;
        }
        if non_interactive && self.cancel() {
            tracing::info!(session = %self.id, "turn cancelled: its non-interactive client went away");
        }
        self.approver.deny_all_pending();
        self.forms.cancel_all_pending();
        if let Some(hooks) = self.hooks.clone()
            && hooks.has(crate::hooks::HookEvent::SessionEnd)
        {
            let reason = if non_interactive {
                "other"
            } else {
                "prompt_input_exit"
            };
            synapse_command::tasks::spawn(async move { hooks.session_end(reason).await });
        }
    }

    /// Where the session keeps the editor front end whose files its file commands use.
    pub fn editor_slot(&self) -> &super::editor_link::EditorSlot {
        &self.editor
    }

    /// A front end attaches: its event receiver, and the events that show it the running turn
    /// from where it is (open tool calls, open questions), to send before the live ones.
    pub fn join(&self) -> (broadcast::Receiver<SessionEvent>, Vec<SessionEvent>) {
        self.events.join()
    }

    /// Idle, running, or waiting for an answer (to which question), for `sessions list`.
    pub fn state(&self) -> RoomState {
        self.events.state(self.is_running())
    }

    /// Its running turn was started detached and goes on without a front end.
    pub fn is_detached(&self) -> bool {
        self.events.is_detached()
    }

    /// Cancels the running turn, if any.
    pub fn cancel(&self) -> bool {
        match self.running.lock().clone() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Starts a turn in the background; its events go to subscribers.
    pub fn start_turn(self: &Arc<Self>, text: String) -> Result<(), TurnError> {
        self.start(Work::Turn(text), None)
    }

    /// Starts a turn that goes on without a front end (`synapse run --detach`): its questions
    /// wait for one to attach, up to `questions.timeoutSecs` of settings.json.
    pub fn start_detached_turn(self: &Arc<Self>, text: String) -> Result<(), TurnError> {
        let timeout = super::room::question_timeout(&(self.deps.settings)());
        self.start(Work::Turn(text), Some(timeout))
    }

    /// Compacts the conversation in the background (`/compact`); a notice says what was done.
    pub fn start_compaction(self: &Arc<Self>) -> Result<(), TurnError> {
        self.start(Work::Compact, None)
    }

    /// Starts `work`; `detached`: with no front end, questions waiting up to this long.
    fn start(
        self: &Arc<Self>,
        work: Work,
        detached: Option<std::time::Duration>,
    ) -> Result<(), TurnError> {
        let token = CancellationToken::new();
        {
            let mut running = self.running.lock();
            if running.is_some() {
                return Err(TurnError::Busy);
            }
            *running = Some(token.clone());
            self.events.set_detached(
                detached.is_some(),
                detached.unwrap_or(super::room::QUESTION_TIMEOUT_DEFAULT),
            );
        }
        let session = self.clone();
        synapse_command::tasks::spawn(async move {
            match work {
                Work::Turn(text) => session.run_turn(text, token).await,
                Work::Compact => {
                    let mut conv = session.conversation.lock().await;
                    let last = match session.provider(&mut conv) {
                        Ok(provider) => {
                            let limits = session.current_limits().await;
                            let system =
                                session.session_prompt(&mut conv).await.system().to_string();
                            let compactor = compact::Compactor::new(
                                &session.id,
                                provider,
                                session.run.prompt(system),
                                &limits,
                                conv.log.path(),
                                session.events.clone(),
                                conv.context_mark,
                            )
                            .with_hooks(session.hooks.clone());
                            let event = compactor
                                .compact(&mut conv.history, compact::Trigger::Forced)
                                .await;
                            conv.context_mark = compactor.mark();
                            session
                                .message_count
                                .store(conv.history.len(), Ordering::Relaxed);
                            event
                        }
                        Err(e) => Some(SessionEvent::Error(e.to_string())),
                    };
                    drop(conv);
                    if let Some(event) = last {
                        session.finish(event);
                    }
                }
            }
            session.clear_running();
        });
        Ok(())
    }

    /// Ends the running work and then sends its last event, so a client that reacts to that
    /// event can start the next piece of work at once.
    fn finish(&self, event: SessionEvent) {
        self.clear_running();
        let _ = self.events.send(event);
    }

    fn clear_running(&self) {
        {
            let mut running = self.running.lock();
            *running = None;
            self.events
                .set_detached(false, super::room::QUESTION_TIMEOUT_DEFAULT);
        }
        {
            let mut t = self.idle_since.lock();
            *t = std::time::Instant::now();
        }
    }

    /// True when nothing runs, no client is attached, and nothing happened for `idle`.
    pub fn is_idle_for(&self, idle: std::time::Duration) -> bool {
        !self.is_running()
            && self.events.receiver_count() == 0
            && self.idle_since.lock().elapsed() >= idle
    }

    /// The stop hook after a completed turn; its report goes out as an event unless the turn
    /// was cancelled meanwhile.
    async fn run_stop_hook(&self, cancel: &CancellationToken) {
        let report = super::stop_hook::after_completed_turn(
            self.deps.stop_hook.as_ref(),
            &self.id,
            &self.session_file,
            &self.cwd,
            &self.env,
            cancel,
        )
        .await;
        if let Some(text) = report {
            let _ = self.events.send(SessionEvent::EnhanceReport(text));
        }
    }

    fn resolve_config(&self) -> Result<ProviderConfig, ConfigError> {
        let model = self.model.in_force();
        let settings = self.run.settings((self.deps.settings)());
        resolve_config(&settings, &self.env, model.as_deref())
    }

    /// The provider for the current configuration, rebuilt only when the configuration changed.
    fn provider(&self, conv: &mut Conversation) -> Result<Arc<dyn LlmProvider>, AgentError> {
        let config = self.resolve_config()?;
        if let Some((cached, provider)) = &conv.provider
            && *cached == config
        {
            return Ok(provider.clone());
        }
        let provider = self.deps.providers.build(&config)?;
        conv.provider = Some((config, provider.clone()));
        Ok(provider)
    }

    /// A provider like the configured one, for `model` (`--fallback-model`).
    fn provider_for(&self, model: &str) -> Result<Arc<dyn LlmProvider>, AgentError> {
        let settings = self.run.settings((self.deps.settings)());
        let config = resolve_config(&settings, &self.env, Some(model))?;
        Ok(self.deps.providers.build(&config)?)
    }

    /// Changes the model for the following turns.
    pub fn set_model(&self, model: Option<String>) {
        self.model.choose(model);
    }

    /// The limits of the session's current model, discovering them if the configuration
    /// changed since the last time.
    pub(super) async fn current_limits(&self) -> synapse_llm::ModelLimits {
        match self.resolve_config() {
            Ok(config) => self.model.limits(&config, &self.id).await,
            Err(_) => synapse_llm::ModelLimits::resolve("", &Default::default(), None),
        }
    }

    /// The model's context window in tokens and where the figure came from, once a turn has
    /// resolved it (`None` before). The output cap sizes tool output from it; `/context`
    /// shows it.
    pub fn context_window(&self) -> Option<(u64, synapse_llm::LimitSource)> {
        self.model.context_window()
    }

    /// Applies an attaching `synapse run` client's options (its prompt and request budget).
    pub fn configure_run(&self, options: RunOptions) {
        self.run.configure(options);
    }

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
                        peak_input: 0,
                    });
                    return;
                }
            }
        }
        // `/<name> args` for a custom command becomes the command's text (custom_command.rs).
        let (text, _turn_model) = match self.expand_custom_command(text, &cancel).await {
            Ok(expanded) => (expanded.text, self.model.for_turn(expanded.model)),
            Err(message) => {
                self.finish(SessionEvent::TurnFinished {
                    end: TurnEnd::Error(TurnFailure::other("command", message)),
                    final_text: String::new(),
                    turn,
                    usage: Usage::default(),
                    peak_input: 0,
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
                    peak_input: 0,
                });
                return;
            }
        };
        let limits = self.current_limits().await;
        let window = limits.context_window;
        // Fixed for the whole session: every request of every turn sends the same bytes; what
        // the turn brings goes in its own message.
        let prompt = self.session_prompt(&mut conv).await;
        let note = turn_prompt::note_on_blocking_thread(&prompt, &text).await;
        Self::keep_prompt(&mut conv, &prompt);
        let sent = turn_prompt::turn_message(sent, &note);
        let system = self.run.prompt(prompt.system().to_string());
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
        // The id of the tool call running now, for its live output and the questions it asks
        // (calls run one at a time).
        let running_call: RunningCall = self.approver.running_call();
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
                editor: Some(self.editor.clone()),
            }),
            system,
            tools: self.run.tools(),
            limits: RunnerLimits {
                max_tokens: limits.max_output_tokens,
                max_turns: self.run.requests_left(),
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
            let (first, requests, peak) =
                (outcome.total_usage, outcome.requests, outcome.peak_input);
            outcome = self
                .run_step(&runner, &mut conv, None, &cancel, &running_call)
                .await;
            outcome.total_usage += first;
            outcome.requests += requests;
            outcome.peak_input = outcome.peak_input.max(peak);
        }
        // `--fallback-model`: the turn goes on with the next model while the one in use is
        // overloaded or unavailable.
        let mut runner = runner;
        for next in self.run.fallback_models() {
            if cancel.is_cancelled() || !fallback::model_unavailable(&outcome.end) {
                break;
            }
            let Ok(provider) = self.provider_for(&next) else {
                continue;
            };
            let _ = self
                .events
                .send(SessionEvent::Agent(AgentEvent::Notice(fallback::notice(
                    &runner.model,
                    &next,
                    &outcome.end,
                ))));
            tracing::warn!(session = %self.id, from = %runner.model, to = %next, "falling back to another model");
            runner = AgentRunner {
                model: provider.model().to_string(),
                provider,
                ..runner
            };
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
        self.run.spend(outcome.requests, &mut outcome.end);
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
            peak_input: outcome.peak_input,
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

    /// Gives a resumed session the prompt its log kept (the last `prompt` record).
    /// Called before anything else can hold the conversation.
    pub(super) fn restore_prompt(&self, saved: serde_json::Value) {
        match self.conversation.try_lock() {
            Ok(mut conv) => conv.prompt_saved = Some(saved),
            Err(_) => {
                tracing::warn!(session = %self.id, "the saved prompt came too late; a new one is rendered")
            }
        }
    }

    /// The session's prompt, fixed at its first use (or as its log kept it).
    async fn session_prompt(&self, conv: &mut Conversation) -> Arc<dyn SessionPrompt> {
        if let Some(prompt) = &conv.prompt {
            return prompt.clone();
        }
        let prompt = turn_prompt::open_on_blocking_thread(
            &self.deps.system_prompt,
            conv.prompt_saved.clone(),
        )
        .await;
        conv.prompt = Some(prompt.clone());
        Self::keep_prompt(conv, &prompt);
        prompt
    }

    /// Writes a `prompt` record when what the log should keep of `prompt` changed.
    fn keep_prompt(conv: &mut Conversation, prompt: &Arc<dyn SessionPrompt>) {
        let Some(saved) = prompt.saved() else { return };
        if conv.prompt_saved.as_ref() == Some(&saved) {
            return;
        }
        if let Err(e) = conv.log.append("prompt", &saved) {
            tracing::error!("{e}");
        }
        conv.prompt_saved = Some(saved);
    }

    /// Runs the turn with the user's message, or continues it from the history (`None`).
    async fn run_step(
        &self,
        runner: &AgentRunner,
        conv: &mut Conversation,
        message: Option<Message>,
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
        let Conversation {
            history,
            log,
            transcript,
            provider,
            ..
        } = conv;
        if let Some((config, _)) = provider {
            transcript.set_model(&config.model);
        }
        let mut write_failed = false;
        let message_count = &self.message_count;
        let mut persist = |m: &Message| {
            message_count.fetch_add(1, Ordering::Relaxed);
            transcript.record(m);
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
        match message {
            Some(message) => {
                runner
                    .run_turn(history, message, cancel, &mut emit, &mut persist)
                    .await
            }
            None => {
                runner
                    .continue_turn(history, cancel, &mut emit, &mut persist)
                    .await
            }
        }
    }

    /// Applies what an attaching client chose: mode ("" keeps the current one), extra allow
    /// patterns, `--allowedTools`/`--disallowedTools` rules, interactivity. Errors name a bad
    /// mode; problems with patterns are returned.
    pub fn configure_permissions(
        &self,
        mode: &str,
        allow: Vec<String>,
        tool_rules: synapse_permissions::RuleSet,
        non_interactive: bool,
        approve_all: bool,
    ) -> Result<Vec<String>, AgentError> {
        let Some(gate) = &self.gate else {
            return Ok(Vec::new());
        };
        let mode = parse_mode(mode)?;
        Ok(gate.reconfigure(GateOptions {
            mode,
            allow,
            tool_rules,
            non_interactive,
            approve_all,
            refusal_hint: Default::default(),
        }))
    }

    /// `--add-dir`: folders this session may write as its own; each must be an existing
    /// folder, named absolutely.
    pub fn set_added_dirs(&self, dirs: &[String]) -> Result<(), AgentError> {
        let mut checked = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let path = std::path::PathBuf::from(dir);
            match std::fs::canonicalize(&path) {
                Ok(real) if path.is_absolute() && real.is_dir() => checked.push(real),
                _ => return Err(AgentError::AddDir(dir.clone())),
            }
        }
        if let Some(gate) = &self.gate {
            gate.set_added_dirs(checked);
        }
        Ok(())
    }

    /// `--dangerously-skip-permissions`: questions answered yes, inside the sandbox.
    pub fn set_bypass(&self, on: bool) {
        if let Some(gate) = &self.gate {
            gate.set_bypass(on);
        }
    }

    /// The permission mode and its summary (`None` without a gate).
    pub fn permission_summary(&self) -> Option<(String, String)> {
        self.gate
            .as_ref()
            .map(|g| (g.mode().as_str().to_string(), g.summary()))
    }

    /// `/permissions <mode>`: changes the mode; the shell moves into the matching sandbox
    /// before its next command. "" only reports.
    pub async fn set_permission_mode(&self, mode: &str) -> Result<(String, String), AgentError> {
        let Some(gate) = &self.gate else {
            return Err(AgentError::NoGate);
        };
        if let Some(mode) = parse_mode(mode)? {
            gate.set_mode(mode);
            tracing::info!(session = %self.id, mode = mode.as_str(), "permission mode changed");
        }
        Ok((gate.mode().as_str().to_string(), gate.summary()))
    }

    /// A client's answer to a form: "accept" with its values as a JSON object, "decline" or
    /// "cancel". `Err` says why it was not taken (the form then stays open, if it was).
    pub fn answer_elicitation(
        &self,
        request_id: &str,
        action: &str,
        content_json: &str,
    ) -> Result<(), crate::agent::forms::FormAnswerError> {
        self.forms.answer(request_id, action, content_json)
    }

    /// The asker of a turn's tool calls: sampling uses `provider`, bounded by
    /// `max_output_tokens`.
    pub(super) fn turn_asker(
        &self,
        provider: Arc<dyn LlmProvider>,
        max_output_tokens: u32,
    ) -> AskerHandle {
        let secret = self
            .resolve_config()
            .ok()
            .and_then(|c| c.api_key.as_ref().map(|k| k.expose().to_string()));
        AskerHandle(Arc::new(TurnAsker {
            session_id: self.id.clone(),
            forms: self.forms.clone(),
            approver: self.approver.clone(),
            provider,
            max_output_tokens,
            secret,
        }))
    }
}

/// The provider configuration for a session: its model override, then the client's environment,
/// then the daemon's, then settings.json.
pub fn resolve_config(
    settings: &synapse_shared::settings::Settings,
    env: &HashMap<String, String>,
    model: Option<&str>,
) -> Result<ProviderConfig, ConfigError> {
    ProviderConfig::resolve(settings, |k| {
        if k == "SYNAPSE_MODEL"
            && let Some(m) = model
        {
            return Some(m.to_string());
        }
        env.get(k).cloned().or_else(|| std::env::var(k).ok())
    })
}

/// Fires the session's `Notification` hooks when the user is asked something; the question
/// does not wait for them.
fn notify_hooks(hooks: &Arc<crate::hooks::SessionHooks>) -> Arc<dyn Fn(&str) + Send + Sync> {
    let hooks = Arc::downgrade(hooks);
    Arc::new(move |title: &str| {
        let Some(hooks) = hooks.upgrade() else {
            return;
        };
        if !hooks.has(crate::hooks::HookEvent::Notification) {
            return;
        }
        let message = format!("Synapse needs your permission: {title}");
        synapse_command::tasks::spawn(async move {
            hooks.notification("permission_prompt", &message).await;
        });
    })
}

enum Work {
    Turn(String),
    Compact,
}

/// A user message typed by the user (not a tool-results message, nor a runner reminder).
pub fn is_user_prompt(m: &Message) -> bool {
    m.role == synapse_llm::Role::User
        && m.content
            .iter()
            .any(|b| matches!(b, synapse_llm::ContentBlock::Text { .. }))
        && !m.text().starts_with("<system-reminder>")
}

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

/// "" → no change; otherwise one of the modes, or an error naming them.
fn parse_mode(mode: &str) -> Result<Option<Mode>, AgentError> {
    let mode = mode.trim();
    if mode.is_empty() {
        return Ok(None);
    }
    mode.parse::<Mode>()
        .map(Some)
        .map_err(|_| AgentError::UnknownMode(mode.to_string()))
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
