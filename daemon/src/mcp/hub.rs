//! [`McpHub`]: the user's MCP servers (one [`McpManager`], shared by every session, wrappers in
//! `$SYNAPSE_HOME/bin`) and one manager per workspace for that project's own servers (wrappers
//! in `$SYNAPSE_HOME/workspaces/<id>/bin`, which only that workspace's shells have on PATH).
//!
//! A caller is answered for its workspace: a project server shadows the user's server of the same
//! name there and nowhere else. Two sessions in one project share its manager (and the warm
//! server processes); a workspace's manager stops its servers once no session has held it for
//! `mcp.projectIdleStopSec` seconds (default 600), and starts again on the next use.
//!
//! Roots: a project's servers are told their workspace root; the user's servers are told every
//! workspace that is up, and are notified when one comes or goes.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::manager::{McpManager, McpOptions, ServerStatus};
use crate::mcp::catalog::CatalogEntry;
use crate::mcp::result::McpCallOutput;
use crate::shell::ShellWorkspace;

/// Default idle period after which a workspace's project servers stop.
pub const PROJECT_IDLE_STOP_DEFAULT: Duration = Duration::from_secs(600);

/// Reads the idle period now (the live `mcp.projectIdleStopSec` setting).
pub type IdleSetting = Arc<dyn Fn() -> Duration + Send + Sync>;

/// Told when a workspace comes up (its bin folder is on its sessions' PATH from now on) and when
/// it went idle and its folder was removed: the skill store keeps the project's skill commands in
/// that folder.
pub trait WorkspaceListener: Send + Sync {
    fn workspace_up(&self, root: &Path, bin_dir: &Path);
    fn workspace_down(&self, root: &Path);
}

/// A workspace that is up, as `synapse daemon status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceUp {
    pub root: PathBuf,
    /// Sessions holding it (agent sessions, `synapse exec` shells).
    pub sessions: usize,
    /// Its project MCP servers, and how many of them are connected.
    pub servers: usize,
    pub servers_ready: usize,
    /// While nobody holds it: how long until its servers stop.
    pub stops_in: Option<Duration>,
}

/// A listener that does nothing (a hub without skills: tests, tools).
pub struct NoListener;

impl WorkspaceListener for NoListener {
    fn workspace_up(&self, _: &Path, _: &Path) {}
    fn workspace_down(&self, _: &Path) {}
}

struct Slot {
    manager: McpManager,
    /// `$SYNAPSE_HOME/workspaces/<id>`: the wrappers and their manifest.
    state_dir: PathBuf,
    bin_dir: PathBuf,
    /// Sessions holding the workspace (their [`Lease`]s).
    leases: AtomicUsize,
    /// When the workspace was last used or last released.
    last_used: Mutex<Instant>,
}

impl Slot {
    fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }
}

/// A session's hold on its workspace's project servers; released when dropped.
pub struct Lease {
    slot: Arc<Slot>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.slot.touch();
        self.slot.leases.fetch_sub(1, Ordering::AcqRel);
    }
}

struct HubInner {
    user: McpManager,
    opts: McpOptions,
    workspaces_dir: PathBuf,
    slots: Mutex<HashMap<PathBuf, Arc<Slot>>>,
    idle: IdleSetting,
    listener: Arc<dyn WorkspaceListener>,
    /// Whether the reaper runs: only while some workspace is up, so an idle daemon sleeps.
    reaper_running: std::sync::atomic::AtomicBool,
}

/// Every MCP manager of the daemon. Cheap to clone.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<HubInner>,
}

impl McpHub {
    /// `workspaces_dir` is `$SYNAPSE_HOME/workspaces`; `idle` reads `mcp.projectIdleStopSec`;
    /// `listener` hears of workspaces coming up and going idle.
    pub fn new(
        opts: McpOptions,
        workspaces_dir: PathBuf,
        idle: IdleSetting,
        listener: Arc<dyn WorkspaceListener>,
    ) -> McpHub {
        McpHub {
            inner: Arc::new(HubInner {
                user: McpManager::new(opts.clone()),
                opts,
                workspaces_dir,
                slots: Mutex::new(HashMap::new()),
                idle,
                listener,
                reaper_running: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// The user's servers.
    pub fn user(&self) -> &McpManager {
        &self.inner.user
    }

    /// The manager of workspace `root`'s project servers, created (and started) on first use.
    /// `env` is the environment of the client asking: the first one fixes `${VAR}` in the
    /// project's config; a later, different one is reported, never applied by a restart
    /// (`synapse mcp refresh` applies the caller's).
    pub fn workspace(&self, root: &Path, env: Option<HashMap<String, String>>) -> McpManager {
        self.slot(root, env).manager.clone()
    }

    /// Binds a session to workspace `root`: its manager, and the bin folder the session's shell
    /// puts first on PATH. The workspace stays up while the returned value lives.
    pub fn bind(&self, root: &Path, env: HashMap<String, String>) -> ShellWorkspace {
        let slot = self.slot(root, Some(env));
        slot.leases.fetch_add(1, Ordering::AcqRel);
        ShellWorkspace {
            root: root.to_path_buf(),
            bin_dir: slot.bin_dir.clone(),
            hold: Arc::new(Lease { slot: slot.clone() }),
            instructions: Arc::default(),
        }
    }

    fn slot(&self, root: &Path, env: Option<HashMap<String, String>>) -> Arc<Slot> {
        let (slot, fresh) = {
            let mut slots = self.inner.slots.lock();
            match slots.get(root) {
                Some(slot) => (slot.clone(), false),
                None => {
                    let state_dir = self
                        .inner
                        .workspaces_dir
                        .join(crate::workspace::workspace_id(root));
                    let manager =
                        McpManager::for_project(self.inner.opts.clone(), root.into(), &state_dir);
                    let slot = Arc::new(Slot {
                        state_dir,
                        bin_dir: manager.bin_dir().to_path_buf(),
                        manager,
                        leases: AtomicUsize::new(0),
                        last_used: Mutex::new(Instant::now()),
                    });
                    slots.insert(root.to_path_buf(), slot.clone());
                    (slot, true)
                }
            }
        };
        slot.touch();
        let env_changed = env.is_some_and(|e| slot.manager.set_client_env(e));
        if fresh || env_changed {
            slot.manager.start();
        }
        if fresh {
            // After the insert: a reaper that found no workspace left has already said so.
            self.start_reaper();
            self.inner.listener.workspace_up(root, &slot.bin_dir);
        }
        slot
    }

    /// The workspace's manager when it is running (no start, no touch).
    fn running(&self, root: &Path) -> Option<McpManager> {
        self.inner.slots.lock().get(root).map(|s| s.manager.clone())
    }

    /// Who serves `server` for a caller in `root`: the project's own server of that name, else
    /// the user's.
    pub fn serving(&self, root: Option<&Path>, server: &str) -> McpManager {
        if let Some(project) = root.map(|r| self.workspace(r, None))
            && project.has_server(server)
        {
            return project;
        }
        self.inner.user.clone()
    }

    /// Runs the command word `mcp:<server>:<tool>` for the call `call` describes (the router's
    /// in-process path, for a caller in its workspace); `None` when no manager of the caller
    /// knows the command.
    pub async fn call_command(
        &self,
        call: &crate::shell::command::CallContext,
        command: &str,
        argv: &[String],
    ) -> Option<McpCallOutput> {
        let root = call.workspace.as_deref();
        self.refresh_if_changed(root).await;
        if let Some(project) = root.map(|r| self.workspace(r, None)) {
            if let Some((server, tool)) = project.resolve_command_waiting(command).await {
                return Some(project.call_argv(&server, &tool, argv, None, call).await);
            }
            if let Some(needs_login) = project.login_needed_for(command) {
                return Some(needs_login);
            }
        }
        self.inner
            .user
            .call_command(command, argv, None, call)
            .await
    }

    /// Applies at once what changed in the config files, the trust list or the approvals since
    /// the last load, for the user's servers and `root`'s (a few `stat`s when nothing did).
    pub async fn refresh_if_changed(&self, root: Option<&Path>) {
        self.inner.user.refresh_if_changed().await;
        if let Some(project) = root.map(|r| self.workspace(r, None)) {
            project.refresh_if_changed().await;
        }
    }

    /// Notes for a caller in `root` with environment `env` that are not config problems: its
    /// environment is not the one the project's servers run with.
    pub fn notes(&self, root: Option<&Path>, env: Option<&HashMap<String, String>>) -> Vec<String> {
        match (root.and_then(|r| self.running(r)), env) {
            (Some(m), Some(env)) => m.env_difference(env).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The managers a caller in `root` sees, the project's first.
    fn visible(&self, root: Option<&Path>) -> Vec<McpManager> {
        let mut out = Vec::with_capacity(2);
        if let Some(project) = root.and_then(|r| self.running(r)) {
            out.push(project);
        }
        out.push(self.inner.user.clone());
        out
    }

    /// `synapse mcp list` for a caller in `root`: the project's servers, then the user's the
    /// project does not shadow; and the config problems, with a warning per shadowed server.
    pub fn list(&self, root: Option<&Path>) -> (Vec<ServerStatus>, Vec<String>) {
        let project = root.map(|r| self.workspace(r, None));
        let mut servers: Vec<ServerStatus> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        if let Some(project) = &project {
            servers.extend(project.list());
            problems.extend(project.config_problems());
        }
        for s in self.inner.user.list() {
            match servers.iter().find(|p| p.name == s.name) {
                Some(p) => problems.push(format!(
                    "{}: the project server {:?} shadows your user server of the same name \
                     ({}) in this project",
                    p.source.display(),
                    s.name,
                    s.source.display()
                )),
                None => servers.push(s),
            }
        }
        problems.extend(self.inner.user.config_problems());
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        (servers, problems)
    }

    /// Every exposed MCP command a caller in `root` can run (`tools search`): the project's,
    /// then the user's whose server the project does not shadow.
    pub fn catalog_entries(&self, root: Option<&Path>) -> Vec<CatalogEntry> {
        let mut out: Vec<CatalogEntry> = Vec::new();
        let mut shadowing: Vec<String> = Vec::new();
        if let Some(project) = root.and_then(|r| self.running(r)) {
            out.extend(project.catalog_entries());
            out.extend(project.resource_entries());
            shadowing = project.list().into_iter().map(|s| s.name).collect();
        }
        let user = self.inner.user.catalog();
        out.extend(user.entries().into_iter().filter(|e| {
            user.resolve(&e.command)
                .is_none_or(|r| !shadowing.contains(&r.server))
        }));
        let shadowed = |command: &str| {
            shadowing
                .iter()
                .any(|s| command.starts_with(&format!("mcp:{}:", super::names::safe_part(s))))
        };
        out.extend(
            self.inner
                .user
                .resource_entries()
                .into_iter()
                .filter(|e| !shadowed(&e.command)),
        );
        out
    }

    /// The system-prompt section of server instructions for a session in `root`.
    pub fn instructions_section(&self, root: Option<&Path>) -> String {
        let mut items: Vec<(String, String)> = Vec::new();
        for m in self.visible(root) {
            for (name, text) in m.server_instructions() {
                if !items.iter().any(|(n, _)| *n == name) {
                    items.push((name, text));
                }
            }
        }
        super::instructions::render_section(&items)
    }

    /// The servers a session in `root` can use (connected or connecting), the project's first;
    /// a project server hides the user's of the same name.
    pub fn server_summaries(&self, root: Option<&Path>) -> Vec<super::instructions::ServerSummary> {
        let mut out: Vec<super::instructions::ServerSummary> = Vec::new();
        for m in self.visible(root) {
            for s in m.server_summaries() {
                if !out.iter().any(|o| o.name == s.name) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// The annotation hints (read-only, destructive) of a command for a caller in `root`.
    pub fn hints(&self, root: Option<&Path>, command: &str) -> (Option<bool>, Option<bool>) {
        for m in self.visible(root) {
            if m.catalog().resolve(command).is_some() {
                return m.catalog().hints(command);
            }
        }
        (None, None)
    }

    /// An `mcp:` command's real server and tool names and its words mapped to the tool's
    /// arguments (as a call would send them), for a caller in `root`: what hooks are shown as
    /// `mcp__<server>__<tool>`. Words the schema does not accept give no arguments.
    pub fn tool_call_of(
        &self,
        root: Option<&Path>,
        command: &str,
        argv: &[String],
    ) -> Option<(String, String, serde_json::Map<String, serde_json::Value>)> {
        self.visible(root).into_iter().find_map(|m| {
            let catalog = m.catalog();
            let found = catalog.resolve(command)?;
            let args = catalog
                .spec(&found.server, &found.tool)
                .and_then(|spec| super::args::map_argv(spec, argv, None).ok())
                .unwrap_or_default();
            Some((found.server.clone(), found.tool.clone(), args))
        })
    }

    /// The exposed command name of `server`'s `tool` for a caller in `root`; a server still
    /// connecting is waited for first (its tools are not known before). When the tool can't be
    /// found, the name it would have (`mcp:<server>:<tool>`, made safe), so rules on that name
    /// still apply to the call.
    pub async fn command_of(&self, root: Option<&Path>, server: &str, tool: &str) -> String {
        let m = self.serving(root, server);
        match m.command_for(server, tool).await {
            Some(command) => command,
            None => super::names::base_command(server, tool),
        }
    }

    /// The workspaces that are up, sorted by root (`synapse daemon status`).
    pub fn workspaces(&self) -> Vec<WorkspaceUp> {
        let idle = (self.inner.idle)();
        let slots: Vec<(PathBuf, Arc<Slot>)> = self
            .inner
            .slots
            .lock()
            .iter()
            .map(|(root, s)| (root.clone(), s.clone()))
            .collect();
        let mut out: Vec<WorkspaceUp> = slots
            .into_iter()
            .map(|(root, slot)| {
                let servers = slot.manager.list();
                let sessions = slot.leases.load(Ordering::Acquire);
                WorkspaceUp {
                    root,
                    sessions,
                    servers: servers.len(),
                    servers_ready: servers
                        .iter()
                        .filter(|s| s.state == super::server::StateKind::Ready)
                        .count(),
                    stops_in: (sessions == 0)
                        .then(|| idle.saturating_sub(slot.last_used.lock().elapsed())),
                }
            })
            .collect();
        out.sort_by(|a, b| a.root.cmp(&b.root));
        out
    }

    /// Stops every server of every workspace and the user's (daemon shutdown).
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<Slot>> = self.inner.slots.lock().drain().map(|(_, s)| s).collect();
        let mut all: Vec<McpManager> = slots.iter().map(|s| s.manager.clone()).collect();
        all.push(self.inner.user.clone());
        futures::future::join_all(all.iter().map(McpManager::shutdown)).await;
    }

    fn start_reaper(&self) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.inner.reaper_running.swap(true, Ordering::AcqRel)
        {
            return;
        }
        crate::lifecycle::tasks::spawn(reaper(Arc::downgrade(&self.inner)));
    }
}

/// Stops the servers of workspaces nobody has held for the idle period; ends once no workspace
/// is up (the next one starts it again).
async fn reaper(hub: Weak<HubInner>) {
    loop {
        let tick = {
            let Some(hub) = hub.upgrade() else { return };
            let idle = (hub.idle)();
            (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(5))
        };
        tokio::time::sleep(tick).await;
        let Some(hub) = hub.upgrade() else { return };
        let idle = (hub.idle)();
        let stale: Vec<(PathBuf, Arc<Slot>)> = {
            let mut slots = hub.slots.lock();
            if slots.is_empty() {
                // Under the lock: a workspace inserted after this starts a new reaper.
                hub.reaper_running.store(false, Ordering::Release);
                return;
            }
            let roots: Vec<PathBuf> = slots
                .iter()
                .filter(|(_, s)| {
                    s.leases.load(Ordering::Acquire) == 0 && s.last_used.lock().elapsed() >= idle
                })
                .map(|(r, _)| r.clone())
                .collect();
            let stale: Vec<(PathBuf, Arc<Slot>)> = roots
                .into_iter()
                .filter_map(|r| slots.remove(&r).map(|s| (r, s)))
                .collect();
            // Its wrappers go with it (written again on the next start); done under the lock
            // so a workspace opened again meanwhile never loses the files it writes.
            for (root, slot) in &stale {
                if let Err(e) = std::fs::remove_dir_all(&slot.state_dir)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(dir = %slot.state_dir.display(), error = %e, "cannot remove an idle workspace's wrappers");
                }
                hub.listener.workspace_down(root);
            }
            stale
        };
        for (root, slot) in stale {
            tracing::info!(workspace = %root.display(), "project MCP servers stopped: idle");
            slot.manager.shutdown().await;
        }
    }
}
