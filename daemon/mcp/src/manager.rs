//! [`McpManager`]: the servers of one layer — the user's (`$SYNAPSE_HOME/mcp`, `~/.claude.json`,
//! Codex; wrappers in `$SYNAPSE_HOME/bin`) or one workspace's project files (wrappers in the
//! workspace's own bin folder) — kept connected in the background, and the views the rest of the
//! daemon uses: the command catalog, the wrappers, listings. [`super::hub::McpHub`] holds one
//! user manager and one manager per active workspace.
//!
//! Flow: [`McpManager::start`] (daemon start) and [`McpManager::refresh`] (`synapse tools refresh
//! mcp`) load the config, diff it against the running servers, (re)connect what changed, then
//! rebuild the catalog and sync the wrappers. Connection events (tools/list_changed, a process
//! exit) arrive on one channel and are handled by a background task ([`sync`], with the catalog
//! and wrapper upkeep); the config of each layer is [`project`]; OAuth login and logout of one
//! server are [`auth`]. Calls live in [`super::calls`].

mod auth;
mod config_source;
mod sync;

pub use auth::AuthOutcome;
use sync::{event_loop, merge_reports};

use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::join_all;
use tokio::sync::mpsc;

use super::catalog::Catalog;
use super::config::ConfigProblem;
use super::connection::ConnectionEvent;
use super::server::{Server, ServerState, StateKind, ToolInfo};
use super::wrappers::{SyncReport, WrapperWriter};

/// Looks up `${VAR}` values (the process environment in the daemon, a map in tests).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where the manager reads and writes.
#[derive(Clone)]
pub struct McpOptions {
    /// `$SYNAPSE_HOME/mcp` (user config, wrapper manifest).
    pub mcp_dir: PathBuf,
    /// `$SYNAPSE_HOME/bin` (wrappers).
    pub bin_dir: PathBuf,
    /// Absolute path of the `synapse` client that wrappers exec.
    pub client_bin: PathBuf,
    /// Where images and audio from results are saved.
    pub media_dir: PathBuf,
    pub env: EnvLookup,
    /// The OAuth tokens of remote servers (`$SYNAPSE_HOME/mcp/oauth`), shared by every manager.
    pub oauth: super::oauth::OAuthVault,
    /// The environment of the user's last `synapse mcp add`/`refresh`: `${VAR}` in the user's
    /// own config expands from it (the daemon's environment until then). Shared by every
    /// manager (a workspace runs the user's `followProject` servers).
    pub user_env: ClientEnv,
    /// Which project settings may turn Claude Code plugins on or off for a workspace (their
    /// servers join that workspace's layer); [`UserOnly`] when none may.
    ///
    /// [`UserOnly`]: synapse_shared::claude_plugins::UserOnly
    pub project_plugins: Arc<dyn synapse_shared::claude_plugins::ProjectPluginSettings>,
}

/// A client's environment as one manager keeps it (`None`: none given yet).
pub type ClientEnv = Arc<Mutex<Option<Arc<std::collections::HashMap<String, String>>>>>;

/// The `synapse` client the wrappers exec: beside this executable, else the first on PATH, else
/// plain `synapse` (resolved by the shell at run time).
pub fn client_binary() -> PathBuf {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("synapse")));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return p;
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("synapse"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("synapse"))
}

impl McpOptions {
    /// Options for a Synapse home, using the process environment.
    pub fn for_home(paths: &synapse_shared::paths::Paths, client_bin: PathBuf) -> McpOptions {
        McpOptions {
            mcp_dir: paths.mcp_dir(),
            bin_dir: paths.bin_dir(),
            client_bin,
            media_dir: synapse_command::output_policy::user_temp_dir(&std::env::temp_dir(), "mcp"),
            env: Arc::new(|k| std::env::var(k).ok()),
            oauth: super::oauth::OAuthVault::new(paths.mcp_oauth_dir()),
            user_env: ClientEnv::default(),
            project_plugins: Arc::new(synapse_shared::claude_plugins::UserOnly),
        }
    }
}

/// One server as `synapse mcp list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub state: StateKind,
    /// Why it failed or is disabled; empty otherwise.
    pub reason: String,
    pub transport: String,
    /// Exposed tools (after allowedTools / disabledTools), or 0 when unknown.
    pub tool_count: u32,
    pub source: PathBuf,
    /// `user`, `project` or `local` (see [`super::local`]).
    pub scope: &'static str,
    pub pid: Option<u32>,
    /// Each exposed tool.
    pub tools: Vec<super::catalog::ListedTool>,
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshSummary {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub reconnected: Vec<String>,
    pub unchanged: Vec<String>,
    /// (server, reason) for servers that are not connected after the refresh.
    pub failed: Vec<(String, String)>,
    pub wrappers: SyncReport,
    /// Config problems, formatted `file:line:col: message`.
    pub problems: Vec<String>,
}

/// Which layer of MCP config a manager serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user's servers, shared by every session.
    User,
    /// The project files of one workspace root (`.mcp.json`, `mcp_servers.json`,
    /// `.vscode/mcp.json`, its `~/.claude.json` entry).
    Project(PathBuf),
    /// The servers one session was opened with ([`super::session`]), for it alone.
    Session(Arc<super::session::SessionScope>),
}

pub(crate) struct Inner {
    pub(crate) opts: McpOptions,
    pub(crate) servers: RwLock<BTreeMap<String, Arc<Server>>>,
    pub(crate) invalid: RwLock<BTreeMap<String, ConfigProblem>>,
    /// Project servers not started (untrusted folder, not approved, changed since approved).
    pub(crate) held: RwLock<BTreeMap<String, super::config::HeldServer>>,
    problems: RwLock<Vec<ConfigProblem>>,
    /// Where the config comes from, with which environment, and whether it changed.
    pub(crate) config: config_source::ConfigSource,
    /// Where connections report (and which roots they announce).
    pub(crate) events: super::connection::Link,
    /// The command catalog and the wrapper files, kept in step with the servers.
    pub(crate) views: sync::CommandViews,
    refresh_lock: tokio::sync::Mutex<()>,
    /// Taken by the first start/refresh, which spawns the event loop (so `new` needs no runtime).
    pending_events: Mutex<Option<mpsc::UnboundedReceiver<ConnectionEvent>>>,
}

/// The MCP subsystem. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct McpManager {
    pub(crate) inner: Arc<Inner>,
}

impl McpManager {
    /// The user's manager, with no servers yet; call [`start`](Self::start) or
    /// [`refresh`](Self::refresh) from within a tokio runtime.
    /// The user's servers are told no project as a root (see [`super::connection::Roots`]).
    pub fn new(opts: McpOptions) -> McpManager {
        let writer =
            WrapperWriter::new(opts.bin_dir.clone(), &opts.mcp_dir, opts.client_bin.clone());
        Self::with_scope(opts, Scope::User, writer, None)
    }

    /// The manager of workspace `root`'s project servers: its wrappers (which name the
    /// workspace) go to `bin_dir`, their manifest to `state_dir`.
    pub fn for_project(
        opts: McpOptions,
        root: PathBuf,
        state_dir: &Path,
        bin_dir: &Path,
    ) -> McpManager {
        let writer = WrapperWriter::new(bin_dir.to_path_buf(), state_dir, opts.client_bin.clone())
            .for_workspace(root.clone());
        let announced = root.clone();
        let roots: super::connection::Roots = Some(Arc::new(move || vec![announced.clone()]));
        Self::with_scope(opts, Scope::Project(root), writer, roots)
    }

    pub(crate) fn with_scope(
        opts: McpOptions,
        scope: Scope,
        writer: WrapperWriter,
        roots: super::connection::Roots,
    ) -> McpManager {
        let (tx, rx) = mpsc::unbounded_channel();
        let oauth = opts.oauth.clone();
        let config = config_source::ConfigSource::new(opts.clone(), scope);
        let inner = Arc::new(Inner {
            opts,
            servers: RwLock::new(BTreeMap::new()),
            invalid: RwLock::new(BTreeMap::new()),
            held: RwLock::new(BTreeMap::new()),
            problems: RwLock::new(Vec::new()),
            config,
            events: super::connection::Link {
                events: tx,
                roots,
                oauth,
            },
            views: sync::CommandViews::new(writer),
            refresh_lock: tokio::sync::Mutex::new(()),
            pending_events: Mutex::new(Some(rx)),
        });
        McpManager { inner }
    }

    fn ensure_event_loop(&self) {
        if let Some(rx) = self.inner.pending_events.lock().take() {
            synapse_command::tasks::spawn(event_loop(Arc::downgrade(&self.inner), rx));
        }
    }

    /// Which layer this manager serves.
    pub fn scope(&self) -> &Scope {
        self.inner.config.scope()
    }

    /// Remembers the environment of the client that opened a session in this workspace: the
    /// first one fixes `${VAR}` for the project's config (true then); a later, different one
    /// changes nothing and is logged (see [`env_difference`](Self::env_difference)).
    pub fn set_client_env(&self, env: HashMap<String, String>) -> bool {
        self.inner.config.set_client_env(env)
    }

    /// What a client with `env` is told when `${VAR}`s the project's config uses differ from
    /// the environment its servers were started with; `None` when they agree.
    pub fn env_difference(&self, env: &HashMap<String, String>) -> Option<String> {
        self.inner.config.env_difference(env)
    }

    /// The user's `synapse mcp refresh`: `${VAR}` in the project's config expands from `env`
    /// from now on.
    pub fn replace_client_env(&self, env: HashMap<String, String>) {
        self.inner.config.replace_client_env(env);
    }

    /// The user's own `synapse mcp add`/`refresh`: `${VAR}` in the user's config (every
    /// manager's `followProject` servers too) expands from `env` from now on.
    pub fn set_user_env(&self, env: HashMap<String, String>) {
        self.inner.config.set_user_env(env);
    }

    /// This manager's config as the files say now ([`config_source::ConfigSource::load`]).
    pub(crate) fn load_config(&self) -> super::config::McpConfig {
        self.inner.config.load()
    }

    /// Loads the config (unless it is loaded and no file changed since) and connects every
    /// server in the background. Returns at once.
    pub fn start(&self) {
        self.ensure_event_loop();
        let this = self.clone();
        synapse_command::tasks::spawn(async move {
            if let Some(summary) = this.refresh_inner(false, true).await {
                for p in &summary.problems {
                    tracing::warn!("MCP config: {p}");
                }
            }
        });
    }

    /// Re-reads the config, reconnects changed and failed servers (waiting for them, each within
    /// its start-up timeout), regenerates wrappers and deletes stale ones.
    pub async fn refresh(&self) -> RefreshSummary {
        self.refresh_inner(true, false).await.unwrap_or_default()
    }

    /// Applies the config at once when a file it comes from (or the trust list, or the
    /// approvals) changed since the last load: servers it adds start connecting in the
    /// background. What a listing or a call does first, so `synapse trust` and `synapse mcp
    /// approve` count at the next one.
    pub async fn refresh_if_changed(&self) {
        if self.inner.config.is_current() {
            return;
        }
        self.refresh_inner(false, true).await;
    }

    /// `None` when `only_if_changed` and nothing changed.
    async fn refresh_inner(&self, wait: bool, only_if_changed: bool) -> Option<RefreshSummary> {
        self.ensure_event_loop();
        let _refresh = self.inner.refresh_lock.lock().await;
        let stamp = self.inner.config.current_stamp();
        if only_if_changed && self.inner.config.is_current_at(&stamp) {
            return None;
        }
        // The files are read on the blocking pool: a project's slow or odd file never holds a
        // runtime thread that every other project's session and `daemon status` share.
        let inner = self.inner.clone();
        let config = tokio::task::spawn_blocking(move || inner.config.load())
            .await
            .unwrap_or_default();
        self.inner.config.loaded_at(stamp);
        let mut summary = RefreshSummary {
            problems: config.problems.iter().map(ToString::to_string).collect(),
            ..RefreshSummary::default()
        };
        summary
            .problems
            .extend(config.invalid.values().map(ToString::to_string));

        let mut to_stop: Vec<(String, Arc<Server>)> = Vec::new();
        let mut to_connect: Vec<Arc<Server>> = Vec::new();
        {
            let mut servers = self.inner.servers.write();
            let old: Vec<String> = servers.keys().cloned().collect();
            for name in old {
                if !config.servers.contains_key(&name)
                    && let Some(s) = servers.remove(&name)
                {
                    to_stop.push((name.clone(), s));
                    summary.removed.push(name);
                }
            }
            for (name, cfg) in &config.servers {
                match servers.get(name) {
                    Some(existing) if !existing.config().needs_reconnect(cfg) => {
                        existing.set_config(cfg.clone());
                        let failed = matches!(
                            existing.state(),
                            ServerState::Failed { .. } | ServerState::NeedsLogin { .. }
                        );
                        if failed && cfg.enabled {
                            to_connect.push(existing.clone());
                            summary.reconnected.push(name.clone());
                        } else {
                            // One still connecting (started by an earlier load) is waited
                            // for like a new one, so the answer says how it went.
                            if wait
                                && cfg.enabled
                                && existing.state_kind().0 == StateKind::Connecting
                            {
                                to_connect.push(existing.clone());
                            }
                            summary.unchanged.push(name.clone());
                        }
                    }
                    Some(_) => {
                        let fresh = Arc::new(Server::new(cfg.clone()));
                        if let Some(old) = servers.insert(name.clone(), fresh.clone()) {
                            to_stop.push((name.clone(), old));
                        }
                        if cfg.enabled {
                            to_connect.push(fresh);
                        }
                        summary.reconnected.push(name.clone());
                    }
                    None => {
                        let fresh = Arc::new(Server::new(cfg.clone()));
                        servers.insert(name.clone(), fresh.clone());
                        if cfg.enabled {
                            to_connect.push(fresh);
                        }
                        summary.added.push(name.clone());
                    }
                }
            }
        }
        *self.inner.invalid.write() = config.invalid.clone();
        *self.inner.held.write() = config.held.clone();
        *self.inner.problems.write() = config.problems.clone();

        join_all(
            to_stop
                .iter()
                .map(|(_, s)| s.stop("removed from the MCP config")),
        )
        .await;
        if !to_stop.is_empty() {
            // A removed server's tool list can be large: its memory goes back to the system.
            drop(to_stop);
            synapse_command::daemon_process::give_back();
        }
        let connects = {
            let this = self.clone();
            async move {
                let events = this.inner.events.clone();
                join_all(to_connect.iter().map(|s| s.connect_unless_ready(&events))).await;
                this.sync_wrappers().await
            }
        };
        // Wrappers of removed servers go now; connected servers add theirs when they are up.
        let report = self.sync_wrappers().await;
        if wait {
            let second = connects.await;
            summary.wrappers = merge_reports(report, second);
            for status in self.list() {
                if matches!(status.state, StateKind::Failed | StateKind::NeedsLogin) {
                    summary.failed.push((status.name, status.reason));
                }
            }
            for (name, problem) in &config.invalid {
                summary.failed.push((name.clone(), problem.to_string()));
            }
            for (name, held) in &config.held {
                summary.failed.push((name.clone(), held.reason()));
            }
        } else {
            summary.wrappers = report;
            synapse_command::tasks::spawn(connects);
        }
        Some(summary)
    }

    /// Every configured server with its state and tool counts, sorted by name.
    pub fn list(&self) -> Vec<ServerStatus> {
        let catalog = self.catalog();
        let mut out = Vec::new();
        for (name, s) in self.inner.servers.read().iter() {
            let cfg = s.config();
            let (state, reason) = s.state_kind();
            let tools = catalog.server_commands(name);
            out.push(ServerStatus {
                name: name.clone(),
                state,
                reason,
                transport: cfg.transport.kind().to_string(),
                tool_count: tools.len() as u32,
                scope: self.scope_of(&cfg.source),
                source: cfg.source.clone(),
                pid: s.ready().and_then(|c| c.pid()),
                tools,
            });
        }
        for (name, held) in self.inner.held.read().iter() {
            out.push(ServerStatus {
                name: name.clone(),
                state: match held.why {
                    super::config::HoldReason::Untrusted { .. } => StateKind::Untrusted,
                    super::config::HoldReason::NeedsApproval => StateKind::NeedsApproval,
                    super::config::HoldReason::Changed => StateKind::Held,
                },
                reason: held.reason(),
                transport: held.config.transport.kind().to_string(),
                tool_count: 0,
                scope: self.scope_of(&held.config.source),
                source: held.config.source.clone(),
                pid: None,
                tools: Vec::new(),
            });
        }
        for (name, problem) in self.inner.invalid.read().iter() {
            out.push(ServerStatus {
                name: name.clone(),
                state: StateKind::Failed,
                reason: problem.to_string(),
                transport: String::new(),
                tool_count: 0,
                scope: self.scope_of(&problem.path),
                source: problem.path.clone(),
                pid: None,
                tools: Vec::new(),
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Config problems from the last load, formatted `file:line:col: message`.
    pub fn config_problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .inner
            .problems
            .read()
            .iter()
            .map(ToString::to_string)
            .collect();
        out.extend(self.inner.invalid.read().values().map(ToString::to_string));
        out
    }

    /// The current command catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.views.catalog()
    }

    /// The folder the wrappers are written to.
    pub fn bin_dir(&self) -> &Path {
        self.inner.views.bin_dir()
    }

    /// The command map of the wrappers as last written.
    pub(crate) fn wrapper_manifest(&self) -> BTreeMap<String, super::names::ToolRef> {
        self.inner.views.manifest()
    }

    /// Stops every server and waits until their processes are gone (daemon shutdown).
    pub async fn shutdown(&self) {
        let servers: Vec<Arc<Server>> = {
            let mut map = self.inner.servers.write();
            std::mem::take(&mut *map).into_values().collect()
        };
        join_all(servers.iter().map(|s| s.stop("synapsed is shutting down"))).await;
    }

    /// True when `name` is configured here (connected or not, held, or with a broken entry).
    pub fn has_server(&self, name: &str) -> bool {
        self.server(name).is_some()
            || self.inner.invalid.read().contains_key(name)
            || self.inner.held.read().contains_key(name)
    }

    /// The scope an entry read from `source` has in this manager.
    fn scope_of(&self, source: &Path) -> &'static str {
        if matches!(self.scope(), Scope::Session(_)) {
            "session"
        } else if source.starts_with(super::local::dir(&self.inner.opts.mcp_dir)) {
            "local"
        } else if *self.scope() == Scope::User || source.starts_with(&self.inner.opts.mcp_dir) {
            "user"
        } else {
            "project"
        }
    }

    pub(crate) fn server(&self, name: &str) -> Option<Arc<Server>> {
        self.inner.servers.read().get(name).cloned()
    }
}

impl RefreshSummary {
    /// Adds another manager's refresh (the caller's workspace) to this one.
    pub fn merge(&mut self, other: RefreshSummary) {
        self.added.extend(other.added);
        self.removed.extend(other.removed);
        self.reconnected.extend(other.reconnected);
        self.unchanged.extend(other.unchanged);
        self.failed.extend(other.failed);
        self.problems.extend(other.problems);
        self.wrappers.written.extend(other.wrappers.written);
        self.wrappers.removed.extend(other.wrappers.removed);
        self.wrappers.skipped.extend(other.wrappers.skipped);
        self.wrappers.unchanged += other.wrappers.unchanged;
    }
}
