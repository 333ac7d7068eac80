//! [`ConfigSource`]: what a manager's config is — the user's layer, or one workspace's layers — the user's
//! `followProject` servers, the project's own files and what other clients wrote for it (listed
//! always; started only in a trusted folder, once approved), and the user's `local` servers for
//! it — with the environment each layer's `${VAR}` expands from. Also the [`Stamp`] of the files
//! a load read, so a listing or call notices a change (a `synapse trust`, an approval, an edit)
//! and applies it at once.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;

use super::{McpOptions, Scope};
use crate::config::{McpConfig, PROJECT_CONFIG_FILES, USER_CONFIG_FILE};

/// Modification time, length and inode of each file a load depends on (`None`: missing).
pub(crate) type Stamp = Vec<Option<(SystemTime, u64, u64)>>;

/// Where one manager's config comes from and with which environment, and whether it changed
/// since the last load.
pub(crate) struct ConfigSource {
    opts: McpOptions,
    scope: Scope,
    /// The environment of the client that first opened the workspace (or last ran `synapse mcp
    /// refresh` there): `${VAR}` in project files expands from it, whoever calls later.
    project_env: Mutex<Option<Arc<HashMap<String, String>>>>,
    /// The `${VAR}` names the last load of the project's config looked up.
    vars_used: Mutex<BTreeSet<String>>,
    /// What the config files looked like at the last load.
    stamp: Mutex<Option<Stamp>>,
    /// The project files the project's servers run, as of the last load: a change to one is a
    /// change of the config (its approval covers their content).
    scripts: Mutex<Vec<PathBuf>>,
}

impl ConfigSource {
    /// The config of `scope`, read with `opts`' folders and environment.
    pub(crate) fn new(opts: McpOptions, scope: Scope) -> Self {
        Self {
            opts,
            scope,
            project_env: Mutex::new(None),
            vars_used: Mutex::new(BTreeSet::new()),
            stamp: Mutex::new(None),
            scripts: Mutex::new(Vec::new()),
        }
    }

    /// Remembers the environment of the client that opened a session in this workspace: the
    /// first one fixes `${VAR}` for the project's config (true then). A later client whose
    /// environment differs in a variable the config uses changes nothing — the servers keep
    /// running as they were started — and is logged (and told by
    /// [`env_difference`](Self::env_difference)).
    pub(crate) fn set_client_env(&self, env: HashMap<String, String>) -> bool {
        if env.is_empty() {
            return false;
        }
        {
            let mut current = self.project_env.lock();
            if current.is_none() {
                *current = Some(Arc::new(env));
                // Read again with it, even when no file changed.
                *self.stamp.lock() = None;
                return true;
            }
        }
        if let Some(note) = self.env_difference(&env) {
            tracing::info!("{note}");
        }
        false
    }

    /// What a client with `env` is told when `${VAR}`s the project's config uses have other
    /// values in it than in the environment the servers were started with; `None` when they
    /// agree.
    pub(crate) fn env_difference(&self, env: &HashMap<String, String>) -> Option<String> {
        let fixed = self.project_env.lock().clone()?;
        let daemon = &self.opts.env;
        let value = |e: &HashMap<String, String>, k: &str| e.get(k).cloned().or_else(|| daemon(k));
        let differs: Vec<String> = self
            .vars_used
            .lock()
            .iter()
            .filter(|k| value(env, k) != value(&fixed, k))
            .map(|k| format!("${{{k}}}"))
            .collect();
        if differs.is_empty() {
            return None;
        }
        let root = match &self.scope {
            Scope::Project(root) => root.display().to_string(),
            Scope::User | Scope::Session(_) => String::new(),
        };
        Some(format!(
            "MCP: the servers of {root} keep the environment of the client that first opened \
             the project; yours differs in {} (used by its MCP config) and is not applied. Run \
             `synapse mcp refresh` there to restart them with yours.",
            differs.join(", ")
        ))
    }

    /// The user's `synapse mcp refresh`: `${VAR}` in the project's config expands from `env`
    /// from now on.
    pub(crate) fn replace_client_env(&self, env: HashMap<String, String>) {
        if env.is_empty() {
            return;
        }
        *self.project_env.lock() = Some(Arc::new(env));
    }

    /// The user's own `synapse mcp add`/`refresh`: `${VAR}` in the user's config (every
    /// manager's `followProject` servers too) expands from `env` from now on.
    pub(crate) fn set_user_env(&self, env: HashMap<String, String>) {
        if !env.is_empty() {
            *self.opts.user_env.lock() = Some(Arc::new(env));
        }
    }

    /// This manager's config. The user's layer: `$SYNAPSE_HOME/mcp/mcp_servers.json`, then
    /// `~/.claude.json`'s own map and Codex, with the user's environment. A workspace's layers,
    /// lowest first: the user's `followProject` servers; the project's files, its
    /// `.vscode/mcp.json` and its `~/.claude.json` entry, with the opening client's environment
    /// (the daemon's for unset names) — held (listed, never started) unless the folder is
    /// trusted and the user approved the entry; the user's `local` servers for this project.
    pub(crate) fn load(&self) -> McpConfig {
        let daemon_env = self.opts.env.clone();
        let home = daemon_env("HOME").map(PathBuf::from);
        let user_env = self.opts.user_env.lock().clone();
        let user_lookup = |k: &str| {
            user_env
                .as_ref()
                .and_then(|e| e.get(k).cloned())
                .or_else(|| daemon_env(k))
        };
        let mcp_dir = &self.opts.mcp_dir;
        let root = match &self.scope {
            Scope::User => {
                let mut config = McpConfig::load_layers(mcp_dir, None, &user_lookup, &user_lookup);
                crate::sources::add_foreign(&mut config, home.as_deref(), None, &user_lookup);
                if let Some(home) = &home {
                    crate::plugin_servers::add(&mut config, home, mcp_dir, &user_lookup);
                }
                // Servers that follow the caller's project run once per workspace instead.
                config.servers.retain(|_, s| !s.follow_project);
                return config;
            }
            Scope::Project(root) => root,
            Scope::Session(session) => return crate::session::load(session, &daemon_env),
        };
        let client_env = self.project_env.lock().clone();
        let used = RefCell::new(BTreeSet::new());
        let project_lookup = |k: &str| {
            used.borrow_mut().insert(k.to_string());
            client_env
                .as_ref()
                .and_then(|e| e.get(k).cloned())
                .or_else(|| daemon_env(k))
        };
        let mut config = following_servers(mcp_dir, root, &user_lookup);

        // The project's own layer runs code the user did not write through Synapse: listed
        // always, started only in a folder the user trusted (`synapse trust`; a trust list that
        // can't be read trusts nothing) and once the user approved that exact entry.
        let mut project = McpConfig::default();
        for path in PROJECT_CONFIG_FILES.iter().map(|f| root.join(f)) {
            project.merge_file(&path, &project_lookup, Some(root));
        }
        crate::sources::add_foreign(&mut project, home.as_deref(), Some(root), &project_lookup);
        let scripts = project
            .servers
            .values()
            .flat_map(|s| crate::approval_files::named_project_files(s, root).into_keys())
            .map(PathBuf::from)
            .collect();
        *self.scripts.lock() = scripts;
        if project_trusted(mcp_dir, root) {
            crate::approval::hold_unapproved(&mut project, root, mcp_dir);
        } else {
            crate::approval::hold_untrusted(&mut project, root);
        }
        // The plugins the trusted project's settings turn on (`None`: not trusted, none),
        // held until approved like the user's plugin servers; the project's own files win.
        let plugin_layers = self.opts.project_plugins.layers(root);
        if let (Some(home), Some(layers)) = (&home, &plugin_layers) {
            let mut plugins = McpConfig::default();
            crate::plugin_servers::add_project(&mut plugins, home, layers, mcp_dir, &user_lookup);
            overlay(&mut config, plugins);
        }
        overlay(&mut config, project);

        // The user's own servers for this project (`--scope local`): no trust or approval.
        let mut local = McpConfig::default();
        local.merge_file(
            &crate::local::file(mcp_dir, root),
            &project_lookup,
            Some(root),
        );
        overlay(&mut config, local);
        *self.vars_used.lock() = used.into_inner();
        config
    }

    /// Which layer the config is.
    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// True when no file the config comes from changed since the last load.
    pub(crate) fn is_current(&self) -> bool {
        self.is_current_at(&self.current_stamp())
    }

    /// True when `stamp` is what the files looked like at the last load.
    pub(crate) fn is_current_at(&self, stamp: &Stamp) -> bool {
        self.stamp.lock().as_ref() == Some(stamp)
    }

    /// Records that a load read the files as `stamp` shows them.
    pub(crate) fn loaded_at(&self, stamp: Stamp) {
        *self.stamp.lock() = Some(stamp);
    }

    /// The [`Stamp`] of the files this manager's config depends on, now.
    pub(crate) fn current_stamp(&self) -> Stamp {
        self.stamp_files().iter().map(|p| file_stamp(p)).collect()
    }

    fn stamp_files(&self) -> Vec<PathBuf> {
        let opts = &self.opts;
        if matches!(self.scope, Scope::Session(_)) {
            // Given once, when the session opened: no file can change it.
            return Vec::new();
        }
        let home = (opts.env)("HOME").map(PathBuf::from);
        let mut files = vec![opts.mcp_dir.join(USER_CONFIG_FILE)];
        if let Some(home) = &home {
            files.push(home.join(crate::sources::CLAUDE_JSON));
        }
        match &self.scope {
            Scope::User => {
                if let Some(home) = &home {
                    files.push(crate::codex::config_file(home, (opts.env)("CODEX_HOME")));
                    // An install or an enable (an approval of a plugin's server refreshes).
                    files.extend(synapse_shared::claude_plugins::deciding_files(home));
                }
            }
            Scope::Session(_) => {}
            Scope::Project(root) => {
                files.extend(PROJECT_CONFIG_FILES.iter().map(|f| root.join(f)));
                files.push(root.join(crate::sources::VSCODE_MCP_JSON));
                files.push(crate::local::file(&opts.mcp_dir, root));
                files.push(opts.mcp_dir.join(crate::approval::APPROVALS_FILE));
                files.extend(self.scripts.lock().iter().cloned());
                if let Some(home) = &home {
                    // A project's `enabledPlugins` (as trusted) may add plugins' servers here.
                    files.extend(synapse_shared::claude_plugins::deciding_files(home));
                    files.extend(opts.project_plugins.deciding_files(root));
                }
                if let Some(synapse_home) = opts.mcp_dir.parent() {
                    files.push(synapse_home.join(synapse_shared::trust::TRUST_FILE));
                }
            }
        }
        files
    }
}

fn file_stamp(path: &Path) -> Option<(SystemTime, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// `top`'s servers replace `base`'s of the same name, whatever state either is in.
fn overlay(base: &mut McpConfig, top: McpConfig) {
    let names = top
        .servers
        .keys()
        .chain(top.invalid.keys())
        .chain(top.held.keys());
    for name in names {
        base.servers.remove(name);
        base.invalid.remove(name);
        base.held.remove(name);
    }
    base.servers.extend(top.servers);
    base.invalid.extend(top.invalid);
    base.held.extend(top.held);
    base.problems.extend(top.problems);
    base.files.extend(top.files);
}

/// The user's own servers marked `"followProject": true`, as the workspace `root` runs them: in
/// its root, told it as their root. They are the user's config, so they need no trust of the
/// folder; a project server of the same name replaces one.
fn following_servers(
    mcp_dir: &Path,
    root: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> McpConfig {
    let user = McpConfig::load_layers(mcp_dir, None, lookup, lookup);
    McpConfig {
        servers: user
            .servers
            .into_iter()
            .filter(|(_, s)| s.follow_project)
            .map(|(name, s)| (name, crate::project_config::in_project(s, root)))
            .collect(),
        ..McpConfig::default()
    }
}

/// True when `root` is inside a folder of `$SYNAPSE_HOME/trusted_folders.json` (`mcp_dir`'s
/// parent); false when the list is missing or can't be read (fail closed).
fn project_trusted(mcp_dir: &Path, root: &Path) -> bool {
    let Some(home) = mcp_dir.parent() else {
        return false;
    };
    match synapse_shared::trust::load(&home.join(synapse_shared::trust::TRUST_FILE)) {
        Ok(folders) => synapse_shared::trust::is_trusted(&folders, root),
        Err(e) => {
            tracing::warn!(error = %e, "trusted folders unreadable: project MCP servers not started");
            false
        }
    }
}
