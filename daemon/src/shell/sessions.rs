//! All named shell sessions of the daemon: created on first use, closed explicitly, by the idle
//! reaper, or all at once on shutdown (which kills every shell and what it started).
//!
//! Calls to one session run one at a time; different sessions run in parallel.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::slot::Slot;
use super::spare::{ShellKey, Spare, Spares};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::capture::OUTPUT_CAP_CHARS;
use super::cgroup::ProcessLimit;
use super::limits::{SessionLimits, SpillBudget};
use super::process::ShellSpec;
use super::router::{BashRouter, ToolCall, ToolResult};
use super::session::ShellSession;
use super::spec::AgentHook;
use synapse_command::CommandRegistry;
use synapse_command::output_policy::{OutputPolicy, cap_for_window, session_dir};
use synapse_sandbox::SandboxSpec;

/// A session unused for this long is closed by the reaper.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How often the reaper looks for idle sessions.
const REAPER_INTERVAL: Duration = Duration::from_secs(60);

/// How a session is created when a call names one that does not exist yet.
#[derive(Debug, Clone, Default)]
pub struct SessionOrigin {
    /// Starting directory; must exist.
    pub cwd: PathBuf,
    /// The environment; empty means the daemon's own.
    pub env: Vec<(OsString, OsString)>,
    /// The OS sandbox of the session's shell; a call with a different one restarts the shell
    /// in it (same folder).
    pub sandbox: Option<SandboxSpec>,
    /// The workspace the session is bound to (its project commands on PATH).
    pub workspace: Option<crate::workspace::WorkspaceBinding>,
    /// The session's private temporary folder (its shell's `TMPDIR`), kept within
    /// `shell.maxTmpMiB` after every call ([`super::tmp_bound`]); `None`: a shared one, never
    /// touched.
    pub private_tmp: Option<PathBuf>,
    /// Makes the private temporary folder of a spare shell for the next session of this kind
    /// ([`super::spare`]); `None`: no spare is kept from this session.
    pub spare_tmp: Option<super::spare::SpareTmp>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("session name must not be empty")]
    EmptyName,
    #[error(
        "session name {0:?} is not a plain name: it becomes a file name, so it may not hold `/`, \
         `\\` or NUL, nor start with `.`"
    )]
    BadName(String),
    #[error("working directory {0} does not exist or is not a folder")]
    BadCwd(PathBuf),
    #[error("working directory must be an absolute path (got {0})")]
    RelativeCwd(PathBuf),
    #[error("the daemon is shutting down")]
    ShuttingDown,
}

pub struct ShellSessions {
    router: BashRouter,
    /// The system-prompt section documenting the agent shell commands.
    commands_doc: String,
    bin_dir: Option<PathBuf>,
    output_cap_chars: usize,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// Cancelled by [`ShellSessions::close_all`]: running commands stop at once.
    closing: CancellationToken,
    /// The current settings (timeout limits); `None`: the built-in limits.
    settings: Option<SettingsSource>,
    /// Credentials removed from every shell's environment.
    secrets: super::spec::SecretVariables,
    /// The pre-started shells waiting for a workspace's next session.
    spares: Spares,
}

/// Reads the current settings (the daemon's settings handle).
pub type SettingsSource = Arc<dyn Fn() -> synapse_shared::settings::Settings + Send + Sync>;

impl ShellSessions {
    /// `bin_dir` (`$SYNAPSE_HOME/bin`) goes first on every shell's PATH.
    pub fn new(commands: Arc<CommandRegistry>, bin_dir: Option<PathBuf>) -> Self {
        // Chosen (and logged) once, before anything is started.
        super::cgroup::enforcement();
        Self {
            commands_doc: commands.system_prompt_section(),
            router: BashRouter::new(commands),
            bin_dir,
            output_cap_chars: OUTPUT_CAP_CHARS,
            slots: Mutex::new(HashMap::new()),
            closing: CancellationToken::new(),
            settings: None,
            secrets: super::spec::SecretVariables::default(),
            spares: Spares::default(),
        }
    }

    /// The credential variables no shell of this registry sees (the model keys are always
    /// among them).
    pub fn with_secret_variables(mut self, secrets: super::spec::SecretVariables) -> Self {
        self.secrets = secrets;
        self
    }

    /// Reads `shell.defaultTimeoutSec` / `shell.maxTimeoutSec` from `settings` before each call.
    pub fn with_settings(mut self, settings: SettingsSource) -> Self {
        self.settings = Some(settings);
        self
    }

    fn limits(&self) -> SessionLimits {
        self.settings
            .as_ref()
            .map(|read| SessionLimits::from_settings(&read()))
            .unwrap_or_default()
    }

    fn timeouts(&self) -> synapse_command::timeouts::Timeouts {
        self.settings
            .as_ref()
            .map(|read| synapse_command::timeouts::Timeouts::from_settings(&read()))
            .unwrap_or_default()
    }

    /// Background jobs still running, over all sessions.
    pub fn running_jobs(&self) -> usize {
        self.lock_slots().values().map(|s| s.jobs.running()).sum()
    }

    /// Background jobs of session `name` still running.
    pub fn running_jobs_of(&self, name: &str) -> usize {
        self.lock_slots().get(name).map_or(0, |s| s.jobs.running())
    }

    /// Agent commands inside compound lines: listens on `socket` and gives every new session
    /// shell the agent functions, which call `helper __agent …` (the `synapsed` executable).
    /// On failure the sessions keep working with the fast path only, and the error says why.
    pub fn with_agent_channel(
        mut self,
        socket: PathBuf,
        helper: PathBuf,
    ) -> Result<Self, super::channel::ChannelError> {
        let channel = super::channel::AgentChannel::bind(socket, helper)?;
        self.router.set_channel(channel);
        Ok(self)
    }

    /// Uses an already bound agent channel (see [`ShellSessions::with_agent_channel`]).
    pub fn with_channel(mut self, channel: Arc<super::channel::AgentChannel>) -> Self {
        self.router.set_channel(channel);
        self
    }

    /// Overrides the output cap (tests, benchmarks).
    pub fn with_output_cap(mut self, chars: usize) -> Self {
        self.output_cap_chars = chars;
        let spill_dir = self.router.output_policy().spill_dir.clone();
        self.router
            .set_output_policy(OutputPolicy::new(chars, spill_dir));
        self
    }

    /// Sizes the output cap from the model's context window (see [`cap_for_window`]).
    pub fn with_context_window(self, window_tokens: Option<u64>) -> Self {
        self.with_output_cap(cap_for_window(window_tokens))
    }

    /// Where the full text of capped results is saved for the model to `read`.
    pub fn with_spill_dir(mut self, dir: PathBuf) -> Self {
        let cap = self.router.output_policy().cap_chars;
        self.router.set_output_policy(OutputPolicy::new(cap, dir));
        self
    }

    /// The system-prompt section documenting the agent shell commands.
    pub fn commands_doc(&self) -> &str {
        &self.commands_doc
    }

    pub fn router(&self) -> &BashRouter {
        &self.router
    }

    fn lock_slots(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        self.slots.lock()
    }

    /// Number of open sessions.
    pub fn len(&self) -> usize {
        self.lock_slots().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock_slots().keys().cloned().collect();
        names.sort();
        names
    }

    fn slot(&self, name: &str, origin: &SessionOrigin) -> Result<Arc<Slot>, SessionError> {
        if name.is_empty() {
            return Err(SessionError::EmptyName);
        }
        // The name is a file name in the sessions folder (todo lists, the conversation the skill
        // sub-agent reads): nothing that could leave it.
        if name.starts_with('.') || name.contains(['/', '\\', '\0']) {
            return Err(SessionError::BadName(name.to_string()));
        }
        if self.closing.is_cancelled() {
            return Err(SessionError::ShuttingDown);
        }
        let mut slots = self.lock_slots();
        if let Some(slot) = slots.get(name) {
            return Ok(slot.clone());
        }
        if !origin.cwd.is_absolute() {
            return Err(SessionError::RelativeCwd(origin.cwd.clone()));
        }
        if !origin.cwd.is_dir() {
            return Err(SessionError::BadCwd(origin.cwd.clone()));
        }
        let env = if origin.env.is_empty() {
            std::env::vars_os().collect()
        } else {
            origin.env.clone()
        };
        if let Some(spare) = self.claimed_spare(origin) {
            let key = self.key_of(origin, &env, origin.sandbox.as_ref());
            if spare.key == key {
                *spare.slot.handed_to.lock() = Some((name.to_owned(), origin.workspace.clone()));
                *spare.slot.named_spills.lock() =
                    Some(session_dir(&self.router.output_policy().spill_dir, name));
                spare.slot.touch();
                slots.insert(name.to_owned(), spare.slot.clone());
                return Ok(spare.slot);
            }
            tracing::debug!(
                differs = %spare.key.differences(&key).join(", "),
                "the spare shell does not fit the session; starting a fresh one"
            );
            super::spare::discard(spare);
        }
        let slot = self.new_slot(
            name,
            origin,
            env,
            origin.sandbox.clone(),
            origin.workspace.clone(),
        );
        slots.insert(name.to_owned(), slot.clone());
        Ok(slot)
    }

    /// The spare the session's gate claimed with its temporary folder, if any.
    fn claimed_spare(&self, origin: &SessionOrigin) -> Option<Spare> {
        origin.spare_tmp.as_ref()?;
        self.spares.take_claimed(origin.private_tmp.as_deref()?)
    }

    fn key_of(
        &self,
        origin: &SessionOrigin,
        env: &[(OsString, OsString)],
        sandbox: Option<&SandboxSpec>,
    ) -> ShellKey {
        let env = super::spare::key_env(env, |k| {
            k == "PATH" || super::spec::passes_through(k, &self.secrets)
        });
        ShellKey {
            cwd: origin.cwd.clone(),
            env,
            bin_dir: self.bin_dir.clone(),
            workspace: origin
                .workspace
                .as_ref()
                .map(|w| (w.root.clone(), w.bin_dir.clone())),
            own: origin
                .workspace
                .as_ref()
                .and_then(|w| w.own_words())
                .map(|(id, bin)| (id.to_string(), bin.to_path_buf())),
            sandbox: sandbox.cloned(),
            secrets: self.secrets.clone(),
            agent: self.router.channel().is_some(),
            output_cap: self.output_cap_chars,
        }
    }

    /// A slot whose shell starts on first use.
    fn new_slot(
        &self,
        label: &str,
        origin: &SessionOrigin,
        env: Vec<(OsString, OsString)>,
        sandbox: Option<SandboxSpec>,
        workspace: Option<crate::workspace::WorkspaceBinding>,
    ) -> Arc<Slot> {
        let scratch = session_dir(&self.router.output_policy().spill_dir, label);
        let limits = self.limits();
        let processes = ProcessLimit::for_session(limits.max_processes);
        let spill = Arc::new(SpillBudget::new(limits.spill_budget_bytes));
        let spec = ShellSpec {
            processes: processes.clone(),
            secrets: self.secrets.clone(),
            scratch: Some(scratch.clone()),
            cwd: origin.cwd.clone(),
            env,
            bin_dir: self.bin_dir.clone(),
            workspace,
            sandbox,
            agent: self.router.channel().map(|channel| {
                let token = super::channel::new_token();
                AgentHook {
                    init_script: channel.init_script(self.router.commands(), &origin.cwd, &token),
                    token,
                }
            }),
        };
        let jobs = super::jobs::JobTable::new(scratch.clone());
        Arc::new(Slot {
            session: Arc::new(tokio::sync::Mutex::new(
                ShellSession::new(label, spec, self.output_cap_chars)
                    .with_jobs(jobs.clone())
                    .with_spill_budget(spill.clone()),
            )),
            last_used: Mutex::new(Instant::now()),
            closed: AtomicBool::new(false),
            scratch,
            jobs,
            processes,
            spill,
            handed_to: Mutex::new(None),
            named_spills: Mutex::new(None),
        })
    }

    /// Makes sure workspace `origin`'s next chat session finds a shell running: starts a spare
    /// in the background unless one is ready (chat sessions of a workspace only).
    fn keep_spare(&self, origin: &SessionOrigin) {
        let (Some(maker), Some(workspace), Some(old_tmp)) = (
            origin.spare_tmp.as_ref(),
            origin.workspace.as_ref(),
            origin.private_tmp.as_deref(),
        ) else {
            return;
        };
        if self.closing.is_cancelled() || self.spares.has_ready(&workspace.root) {
            return;
        }
        let Some(tmp) = (maker.0)() else {
            return;
        };
        let base: Vec<(OsString, OsString)> = if origin.env.is_empty() {
            std::env::vars_os().collect()
        } else {
            origin.env.clone()
        };
        let (env, sandbox) =
            super::spare::retarget(&base, origin.sandbox.as_ref(), old_tmp, tmp.path());
        let key = self.key_of(origin, &env, sandbox.as_ref());
        // No lease: a spare never keeps its workspace up (the session taking it brings its own).
        // Nor a session's own commands: the next session brings its own, if any.
        let unheld = crate::workspace::WorkspaceBinding {
            hold: Arc::new(()),
            own: None,
            ..workspace.clone()
        };
        let label = format!("spare-{:016x}", super::sentinel::random_u64());
        let slot = self.new_slot(&label, origin, env, sandbox, Some(unheld));
        let spare = Spare {
            root: workspace.root.clone(),
            key,
            slot: slot.clone(),
            tmp,
        };
        if let Some(spare) = self.spares.offer(spare) {
            super::spare::discard(spare);
            return;
        }
        synapse_command::tasks::spawn(async move {
            let mut session = slot.session.clone().lock_owned().await;
            if slot.closed.load(Ordering::Acquire) {
                return;
            }
            slot.adopt(&mut session);
            if let Err(e) = session.warm_up().await {
                tracing::warn!("cannot start a spare shell: {e}");
            }
        });
    }

    /// The temporary folder of workspace `root`'s spare shell started in `cwd`, for a new chat
    /// session's gate: that session's first call then takes the running shell over (when
    /// nothing else differs). `None`: no spare; the gate makes its own folder.
    pub fn claim_spare_tmp(&self, root: &Path, cwd: &Path) -> Option<Arc<tempfile::TempDir>> {
        self.spares.claim(root, cwd)
    }

    /// Spare shells kept now (ready or claimed).
    pub fn spare_count(&self) -> usize {
        self.spares.len()
    }

    /// Creates session `name` if needed and starts its shell in the background, so that its
    /// first command finds the shell running (a chat session warms its shell while the model
    /// thinks); then keeps a spare for the workspace's next session.
    pub fn warm_up(self: &Arc<Self>, name: &str, origin: &SessionOrigin) {
        let Ok(slot) = self.slot(name, origin) else {
            return;
        };
        let sessions = Arc::downgrade(self);
        let origin = origin.clone();
        synapse_command::tasks::spawn(async move {
            let mut session = slot.session.clone().lock_owned().await;
            if slot.closed.load(Ordering::Acquire) {
                return;
            }
            slot.adopt(&mut session);
            let started = !session.is_running();
            if let Err(e) = session.warm_up().await {
                tracing::warn!("cannot start a shell ahead of use: {e}");
                return;
            }
            drop(session);
            // A session that took a spare over replaces it after its first call instead, so the
            // new spare's start does not slow that call down.
            if started && let Some(sessions) = sessions.upgrade() {
                sessions.keep_spare(&origin);
            }
        });
    }

    /// Runs one Bash-tool call in session `name`, creating the session from `origin` if needed.
    pub async fn execute(
        &self,
        name: &str,
        origin: &SessionOrigin,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, SessionError> {
        let (slot, mut session) = loop {
            let slot = self.slot(name, origin)?;
            slot.touch();
            let session = slot.session.clone().lock_owned().await;
            if !slot.closed.load(Ordering::Acquire) {
                break (slot, session);
            }
        };
        slot.adopt(&mut session);
        session.set_sandbox(origin.sandbox.clone()).await;
        session.set_timeouts(self.timeouts());
        let limits = self.limits();
        slot.apply(limits);
        let token = self.closing.child_token();
        let run = self.router.execute(&mut session, call, &token);
        tokio::pin!(run);
        let result = loop {
            tokio::select! {
                result = &mut run => break result,
                () = cancel.cancelled(), if !token.is_cancelled() => token.cancel(),
            }
        };
        slot.touch();
        self.keep_spare(origin);
        let mut result = result;
        if let Some(tmp) = origin.private_tmp.clone() {
            let budget = limits.tmp_budget_bytes;
            let note = tokio::task::spawn_blocking(move || super::tmp_bound::enforce(&tmp, budget))
                .await
                .ok()
                .flatten();
            if let Some(note) = note {
                if !result.output.is_empty() && !result.output.ends_with('\n') {
                    result.output.push('\n');
                }
                result.output.push_str(&format!("[{note}]"));
            }
        }
        Ok(result)
    }

    /// Closes one session, killing its shell. False when there was none.
    pub async fn close(&self, name: &str) -> bool {
        let slot = self.lock_slots().remove(name);
        match slot {
            Some(slot) => {
                slot.close().await;
                true
            }
            None => false,
        }
    }

    /// The current folder of session `name`'s shell (None when it has none, or it is busy).
    pub fn cwd_of(&self, name: &str) -> Option<PathBuf> {
        let slot = self.lock_slots().get(name).cloned()?;
        let session = slot.session.try_lock().ok()?;
        Some(session.cwd().to_path_buf())
    }

    /// Closes every session (daemon shutdown): no shell or child outlives this.
    pub async fn close_all(&self) {
        self.closing.cancel();
        let slots: Vec<Arc<Slot>> = self.lock_slots().drain().map(|(_, s)| s).collect();
        let spares = self.spares.drain_all();
        let closing = slots
            .iter()
            .chain(spares.iter().map(|s| &s.slot))
            .map(|slot| slot.close());
        futures::future::join_all(closing).await;
        drop(spares);
        super::cgroup::release_daemon_folder();
    }

    /// Closes sessions idle for at least `idle` and not running anything (no command, no
    /// background job); returns their names.
    pub async fn close_idle(&self, idle: Duration) -> Vec<String> {
        let idle_slots: Vec<(String, Arc<Slot>)> = {
            let mut slots = self.lock_slots();
            let names: Vec<String> = slots
                .iter()
                .filter(|(_, s)| {
                    s.idle_for() >= idle && s.jobs.running() == 0 && s.session.try_lock().is_ok()
                })
                .map(|(n, _)| n.clone())
                .collect();
            names
                .into_iter()
                .filter_map(|n| slots.remove(&n).map(|s| (n, s)))
                .collect()
        };
        for (_, slot) in &idle_slots {
            slot.close().await;
        }
        for spare in self.spares.drain_stale(idle) {
            spare.slot.close().await;
        }
        idle_slots.into_iter().map(|(n, _)| n).collect()
    }

    /// Kills the spare shells of workspace `root` (it went down).
    pub fn drop_spares_of(&self, root: &std::path::Path) {
        for spare in self.spares.drain_root(root) {
            super::spare::discard(spare);
        }
    }

    /// Starts the task closing sessions idle for [`SESSION_IDLE_TIMEOUT`].
    pub fn spawn_idle_reaper(self: &Arc<Self>) -> JoinHandle<Option<()>> {
        let sessions = Arc::downgrade(self);
        synapse_command::tasks::spawn(async move {
            let mut tick = tokio::time::interval(REAPER_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(sessions) = sessions.upgrade() else {
                    return;
                };
                for name in sessions.close_idle(SESSION_IDLE_TIMEOUT).await {
                    tracing::info!(session = %name, "closed idle shell session");
                }
            }
        })
    }
}

/// Spares live and die with their workspace.
impl synapse_command::workspaces::WorkspaceListener for ShellSessions {
    fn workspace_up(&self, _root: &Path, _dirs: &synapse_command::workspaces::WorkspaceDirs) {}

    fn workspace_down(&self, root: &Path) {
        self.drop_spares_of(root);
    }
}
