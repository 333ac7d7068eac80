//! One live chat session: its history, its session file, the running turn and the broadcast of
//! its events. A session outlives the client that opened it: clients subscribe to its events,
//! and a client that comes back (resume by id) subscribes again.

mod asks;
mod compact;
mod custom_command;
mod deps;
mod limits;
mod permissions;
mod run_options;
mod turn;

pub use deps::{LlmProviders, ProviderFactory, SessionDeps};
pub use run_options::RunOptions;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::approvals::SessionApprover;
use super::events::{AgentEvent, TurnEnd};
use super::forms::SessionForms;
use super::gate::audit::Audit;
use super::gate::{GateOptions, SessionGate};

use super::session_log::SessionLog;
use crate::shell::SessionOrigin;
use synapse_llm::{ConfigError, LlmProvider, Message, ProviderConfig, Usage};

/// Events buffered per session for slow subscribers.
pub const EVENT_BUFFER: usize = 256;

/// What subscribers of a session see.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    Agent(AgentEvent),
    /// Something needs the user's yes or no (answered with [`ChatSession::answer_approval`]).
    Approval {
        id: String,
        title: String,
        detail: String,
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
    },
    /// The skill enhancer's report, sent just before the turn's `TurnFinished`.
    EnhanceReport(String),
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("a turn is already running in this session; cancel it first")]
    Busy,
}

pub(super) struct Conversation {
    pub history: Vec<Message>,
    pub log: SessionLog,
    pub turns: u32,
    /// What the server last reported about the context (`None` for a resumed session and after
    /// a compaction: then the history is estimated).
    pub context_mark: Option<super::context::ContextMark>,
    pub total_usage: Usage,
    provider: Option<(ProviderConfig, Arc<dyn LlmProvider>)>,
}

pub struct ChatSession {
    pub id: String,
    pub cwd: PathBuf,
    /// The session's log (the conversation's file never moves).
    session_file: PathBuf,
    env: HashMap<String, String>,
    model_override: Mutex<Option<String>>,
    /// The model of the running turn only (a custom command's `model`), before the override.
    turn_model: Mutex<Option<String>>,
    events: broadcast::Sender<SessionEvent>,
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
    /// The model's limits, found when a turn or compaction first needs them (see `limits.rs`).
    model_limits: Mutex<Option<(ProviderConfig, synapse_llm::ModelLimits)>>,
    /// The attached `synapse run` client's prompt and request budget (see `run_options.rs`).
    run: Mutex<run_options::RunState>,
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
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let hooks = deps.hooks.as_ref().map(|daemon_hooks| {
            let notices = events.clone();
            daemon_hooks.session(crate::hooks::SessionFacts {
                session_id: id.clone(),
                transcript_path: log.path().to_path_buf(),
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
            Arc::new(gate.with_private_tmp())
        });
        Self {
            hooks,
            session_file: log.path().to_path_buf(),
            gate,
            idle_since: Mutex::new(std::time::Instant::now()),
            turns_done: AtomicU32::new(turns),
            message_count,
            model_limits: Mutex::new(None),
            run: Mutex::default(),
            id,
            cwd,
            env,
            model_override: Mutex::new(model),
            turn_model: Mutex::new(None),
            events,
            approver,
            forms,
            running: Mutex::new(None),
            conversation: tokio::sync::Mutex::new(Conversation {
                history,
                log,
                turns,
                context_mark: None,
                total_usage: Usage::default(),
                provider: None,
            }),
            deps,
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    /// Clients receiving this session's events now.
    pub fn client_count(&self) -> usize {
        self.events.receiver_count()
    }

    pub fn is_running(&self) -> bool {
        self.running.lock().is_some()
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
            Err(_) => self.model_override.lock().clone().unwrap_or_default(),
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

    /// A client's stream closed (it exited, was killed, or lost the connection). A
    /// non-interactive client's turn is cancelled (its command killed); open approval requests
    /// are answered "no" and open forms "cancel" unless another client is still attached to
    /// answer them.
    pub fn client_left(&self, non_interactive: bool) {
        // This client's own event forwarder may still hold a receiver.
        let others_attached = self.events.receiver_count() > 1;
        if non_interactive && self.cancel() {
            tracing::info!(session = %self.id, "turn cancelled: its non-interactive client went away");
        }
        if non_interactive || !others_attached {
            self.approver.deny_all_pending();
            self.forms.cancel_all_pending();
        }
        if !others_attached
            && let Some(hooks) = self.hooks.clone()
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
        self.start(Work::Turn(text))
    }

    /// Compacts the conversation in the background (`/compact`); a notice says what was done.
    pub fn start_compaction(self: &Arc<Self>) -> Result<(), TurnError> {
        self.start(Work::Compact)
    }

    fn start(self: &Arc<Self>, work: Work) -> Result<(), TurnError> {
        let token = CancellationToken::new();
        {
            let mut running = self.running.lock();
            if running.is_some() {
                return Err(TurnError::Busy);
            }
            *running = Some(token.clone());
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
                            let compactor = compact::Compactor::new(
                                &session.id,
                                provider,
                                crate::agent::turn_prompt::render_for_turn(
                                    &session.deps.system_prompt,
                                    &conv.history,
                                    "",
                                )
                                .await,
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
        let turn_model = self.turn_model.lock().clone();
        let model = turn_model.or_else(|| self.model_override.lock().clone());
        resolve_config(&(self.deps.settings)(), &self.env, model.as_deref())
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

    /// Changes the model for the following turns.
    pub fn set_model(&self, model: Option<String>) {
        {
            let mut m = self.model_override.lock();
            *m = model;
        }
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

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
