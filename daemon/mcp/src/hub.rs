//! [`McpHub`]: the user's MCP servers (one [`McpManager`], shared by every session, wrappers in
//! `$SYNAPSE_HOME/bin`) and one manager per workspace for that project's own servers (wrappers
//! in the workspace's bin folder, which only that workspace's shells have on PATH).
//!
//! A caller is answered for its workspace: a project server shadows the user's server of the same
//! name there and nowhere else. Two sessions in one project share its manager (and the warm
//! server processes). Which workspaces are up is the daemon's business ([`WorkspaceHost`]): asking about a
//! project brings its workspace up, and when it goes down (idle) its manager stops its servers;
//! the next use starts them again.
//!
//! A session opened with servers of its own ([`super::session`]) gets a manager of its own too
//! ([`sessions`]): a caller naming that session sees its servers first (they shadow a project or
//! user server of the same name), and a strict session sees only them.
//!
//! Roots: a project's servers are told their workspace root; the user's servers are told none.

mod sessions;

pub use sessions::SessionOpened;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use super::manager::{McpManager, McpOptions, ServerStatus};
use crate::catalog::CatalogEntry;
use crate::result::McpCallOutput;
use synapse_command::workspaces::{WorkspaceDirs, WorkspaceHost, WorkspaceListener};

struct HubInner {
    user: McpManager,
    opts: McpOptions,
    workspaces: Arc<dyn WorkspaceHost>,
    /// The project managers of the workspaces that are up (or were asked about since).
    projects: Mutex<HashMap<PathBuf, McpManager>>,
    /// The managers of the sessions opened with servers of their own, by session id.
    sessions: Mutex<HashMap<String, sessions::SessionServers>>,
}

/// Every MCP manager of the daemon. Cheap to clone.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<HubInner>,
}

/// Stops a workspace's project servers when it goes down.
struct StopWhenDown(Weak<HubInner>);

impl WorkspaceListener for StopWhenDown {
    fn workspace_up(&self, _: &Path, _: &WorkspaceDirs) {}

    fn workspace_down(&self, root: &Path) {
        let Some(hub) = self.0.upgrade() else { return };
        let Some(manager) = hub.projects.lock().remove(root) else {
            return;
        };
        tracing::info!(workspace = %root.display(), "project MCP servers stopped: idle");
        synapse_command::tasks::spawn(async move { manager.shutdown().await });
    }
}

impl McpHub {
    /// Subscribes to `workspaces`: a workspace that goes down stops its project servers.
    pub fn new(opts: McpOptions, workspaces: Arc<dyn WorkspaceHost>) -> McpHub {
        let inner = Arc::new(HubInner {
            user: McpManager::new(opts.clone()),
            opts,
            workspaces,
            projects: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
        });
        inner
            .workspaces
            .subscribe(Arc::new(StopWhenDown(Arc::downgrade(&inner))));
        McpHub { inner }
    }

    /// The user's servers.
    pub fn user(&self) -> &McpManager {
        &self.inner.user
    }

    /// The manager of workspace `root`'s project servers, bringing the workspace up and starting
    /// them on first use. `env` is the environment of the client asking: the first one fixes
    /// `${VAR}` in the project's config; a later, different one is reported, never applied by a
    /// restart (`synapse mcp refresh` applies the caller's).
    pub fn workspace(&self, root: &Path, env: Option<HashMap<String, String>>) -> McpManager {
        let dirs = self.inner.workspaces.open(root);
        let (manager, fresh) = {
            let mut projects = self.inner.projects.lock();
            match projects.get(root) {
                Some(m) => (m.clone(), false),
                None => {
                    let m = McpManager::for_project(
                        self.inner.opts.clone(),
                        root.into(),
                        &dirs.state_dir,
                        &dirs.bin_dir,
                    );
                    projects.insert(root.to_path_buf(), m.clone());
                    (m, true)
                }
            }
        };
        let env_changed = env.is_some_and(|e| manager.set_client_env(e));
        if fresh || env_changed {
            manager.start();
        }
        manager
    }

    /// The workspace's manager when it is running (no start, no touch).
    fn running(&self, root: &Path) -> Option<McpManager> {
        self.inner.projects.lock().get(root).cloned()
    }

    /// Project `root`'s servers and how many of them are connected, when its manager runs
    /// (`synapse daemon status`).
    pub fn project_server_counts(&self, root: &Path) -> (usize, usize) {
        self.running(root).map_or((0, 0), |m| {
            let servers = m.list();
            let ready = servers
                .iter()
                .filter(|s| s.state == super::server::StateKind::Ready)
                .count();
            (servers.len(), ready)
        })
    }

    /// Who serves `server` for a caller in `root` (of `session`): the session's own server of
    /// that name, else the project's, else the user's.
    pub fn serving(&self, root: Option<&Path>, session: Option<&str>, server: &str) -> McpManager {
        if let Some(own) = self.session(session)
            && own.manager.has_server(server)
        {
            return own.manager;
        }
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
        call: &synapse_command::CallContext,
        command: &str,
        argv: &[String],
    ) -> Option<McpCallOutput> {
        let root = call.workspace.as_deref();
        if let Some(own) = self.session(call.session.as_deref()) {
            if let Some((server, tool)) = own.manager.resolve_command_waiting(command).await {
                return Some(
                    own.manager
                        .call_argv(&server, &tool, argv, None, call)
                        .await,
                );
            }
            if let Some(refusal) = own.refusal_of_command(command) {
                return Some(McpCallOutput::error(crate::EXIT_UNAVAILABLE, refusal));
            }
        }
        self.refresh_if_changed(root).await;
        if let Some(project) = root.map(|r| self.workspace(r, None)) {
            if let Some((server, tool)) = project.resolve_command_waiting(command).await {
                return Some(project.call_argv(&server, &tool, argv, None, call).await);
            }
            if let Some(needs_login) = project.login_needed_for(command) {
                return Some(needs_login);
            }
            if let Some(off) = turned_off_by(&project, command) {
                return Some(McpCallOutput::error(crate::EXIT_UNAVAILABLE, off));
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

    /// The managers a caller in `root` (of `session`) sees: the session's own first, then the
    /// project's, then the user's — only the session's for a strict one.
    fn visible(&self, root: Option<&Path>, session: Option<&str>) -> Vec<McpManager> {
        let mut out = Vec::with_capacity(3);
        if let Some(own) = self.session(session) {
            out.push(own.manager);
            if own.strict {
                return out;
            }
        }
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
                // The project's enabledPlugins turned this plugin off here: listed as disabled.
                Some(p) if super::plugin_servers::is_turned_off(&p.name, &p.source) => {}
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

    /// Every exposed MCP command a caller in `root` (of `session`) can run (`tools search`): the
    /// session's own, then the project's, then the user's; a server hides those of the same
    /// name further down, and a strict session sees only its own.
    pub fn catalog_entries(&self, root: Option<&Path>, session: Option<&str>) -> Vec<CatalogEntry> {
        let mut out: Vec<CatalogEntry> = Vec::new();
        let mut shadowing: Vec<String> = Vec::new();
        for m in self.visible(root, session) {
            let names: Vec<String> = m.list().into_iter().map(|s| s.name).collect();
            let catalog = m.catalog();
            let shadowed = |command: &str| {
                shadowing
                    .iter()
                    .any(|s| command.starts_with(&format!("mcp:{}:", super::names::safe_part(s))))
            };
            out.extend(catalog.entries().into_iter().filter(|e| {
                catalog
                    .resolve(&e.command)
                    .is_none_or(|r| !shadowing.contains(&r.server))
            }));
            out.extend(
                m.resource_entries()
                    .into_iter()
                    .filter(|e| !shadowed(&e.command)),
            );
            shadowing.extend(names);
        }
        out
    }

    /// The system-prompt section of server instructions for a session in `root`.
    pub fn instructions_section(&self, root: Option<&Path>, session: Option<&str>) -> String {
        let items = self.unshadowed(root, session, |m| m.server_instructions());
        super::instructions::render_section(&items)
    }

    /// The servers a session in `root` can use (connected or connecting), the project's first;
    /// a project server hides the user's of the same name (also a disabled one: a project's
    /// "off" for a user's plugin), and a session's own server both.
    pub fn server_summaries(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
    ) -> Vec<super::instructions::ServerSummary> {
        self.unshadowed(root, session, |m| {
            m.server_summaries()
                .into_iter()
                .map(|s| (s.name.clone(), s))
                .collect()
        })
        .into_iter()
        .map(|(_, s)| s)
        .collect()
    }

    /// What `of` gives of each manager a caller in `root` (of `session`) sees, by server name,
    /// leaving out what a server of the same name in a manager before it hides — whatever that
    /// server's state (held, invalid and disabled servers hide too).
    fn unshadowed<T>(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
        of: impl Fn(&McpManager) -> Vec<(String, T)>,
    ) -> Vec<(String, T)> {
        let mut out: Vec<(String, T)> = Vec::new();
        let mut hidden: Vec<String> = Vec::new();
        for m in self.visible(root, session) {
            for (name, item) in of(&m) {
                if !hidden.contains(&name) && !out.iter().any(|(n, _)| *n == name) {
                    out.push((name, item));
                }
            }
            hidden.extend(m.list().into_iter().map(|s| s.name));
        }
        out
    }

    /// The annotation hints (read-only, destructive) of a command for a caller in `root` (of
    /// `session`).
    pub fn hints(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
        command: &str,
    ) -> (Option<bool>, Option<bool>) {
        for m in self.visible(root, session) {
            if m.catalog().resolve(command).is_some() {
                return m.catalog().hints(command);
            }
        }
        (None, None)
    }

    /// An `mcp:` command's real server and tool names and its words mapped to the tool's
    /// arguments (as a call would send them), for a caller in `root` (of `session`, whose own
    /// servers come first): what hooks are shown as `mcp__<server>__<tool>`. Words the schema
    /// does not accept give no arguments.
    pub fn tool_call_of(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
        command: &str,
        argv: &[String],
    ) -> Option<(String, String, serde_json::Map<String, serde_json::Value>)> {
        self.visible(root, session).into_iter().find_map(|m| {
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
    pub async fn command_of(
        &self,
        root: Option<&Path>,
        session: Option<&str>,
        server: &str,
        tool: &str,
    ) -> String {
        let m = self.serving(root, session, server);
        match m.command_for(server, tool).await {
            Some(command) => command,
            None => super::names::base_command(server, tool),
        }
    }

    /// Stops every server of every workspace and the user's (daemon shutdown).
    pub async fn shutdown(&self) {
        let mut all: Vec<McpManager> = self.inner.projects.lock().drain().map(|(_, m)| m).collect();
        all.extend(self.inner.sessions.lock().drain().map(|(_, s)| s.manager));
        all.push(self.inner.user.clone());
        futures::future::join_all(all.iter().map(McpManager::shutdown)).await;
    }
}

/// Why `command` does not run for a caller in `project`'s workspace when it names a user
/// plugin's server the project's `enabledPlugins` turned off there.
fn turned_off_by(project: &McpManager, command: &str) -> Option<String> {
    project
        .list()
        .into_iter()
        .filter(|s| super::plugin_servers::is_turned_off(&s.name, &s.source))
        .find(|s| command.starts_with(&format!("mcp:{}:", super::names::safe_part(&s.name))))
        .map(|s| {
            format!(
                "{command}: the plugin server {} is turned off in this project by {} \
                 (enabledPlugins); it runs in other folders",
                s.name,
                s.source.display()
            )
        })
}
