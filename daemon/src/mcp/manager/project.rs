//! What a manager's config is: the user's layer, or one workspace's project files read with the
//! environment of the client that opened the workspace.

use std::collections::HashMap;
use std::sync::Arc;

use super::{McpManager, Scope};
use crate::mcp::config::{ConfigProblem, McpConfig, PROJECT_CONFIG_FILES};

impl McpManager {
    /// Remembers the environment of the client that opened a session in this workspace
    /// (`${VAR}` in the project's files expands from it). True when it changed.
    pub fn set_client_env(&self, env: HashMap<String, String>) -> bool {
        if env.is_empty() {
            return false;
        }
        let mut current = self.inner.project_env.lock();
        if current.as_deref() == Some(&env) {
            return false;
        }
        *current = Some(Arc::new(env));
        true
    }

    /// This manager's config. The user's layer: `$SYNAPSE_HOME/mcp/mcp_servers.json`, then
    /// `~/.claude.json`'s own map and Codex, with the daemon's environment. A workspace's
    /// layer: the project's files (only in a folder the user trusted, and only the servers the
    /// user approved), with the opening client's environment (the daemon's for unset names).
    pub(crate) fn load_config(&self) -> McpConfig {
        let daemon_env = self.inner.opts.env.clone();
        let home = daemon_env("HOME").map(std::path::PathBuf::from);
        let root = match &self.inner.scope {
            Scope::User => {
                let lookup = |k: &str| daemon_env(k);
                let mut config =
                    McpConfig::load_layers(&self.inner.opts.mcp_dir, None, &lookup, &lookup);
                crate::mcp::sources::add_foreign(&mut config, home.as_deref(), None, &lookup);
                // Servers that follow the caller's project run once per workspace instead.
                config.servers.retain(|_, s| !s.follow_project);
                return config;
            }
            Scope::Project(root) => root,
        };
        let mut config = self.following_servers(root);
        let client_env = self.inner.project_env.lock().clone();
        let project_lookup = |k: &str| {
            client_env
                .as_ref()
                .and_then(|e| e.get(k).cloned())
                .or_else(|| daemon_env(k))
        };
        // A repository's own MCP config runs code: it counts only in a folder the user trusted
        // (`synapse trust`). A trust list that can't be read counts as trusting nothing.
        if !project_trusted(&self.inner.opts.mcp_dir, root) {
            for path in PROJECT_CONFIG_FILES
                .iter()
                .map(|f| root.join(f))
                .filter(|p| p.is_file())
            {
                config.problems.push(ConfigProblem {
                    path: path.clone(),
                    line: 0,
                    column: 0,
                    server: None,
                    message: format!(
                        "not used: {} is not a trusted folder, and a project's MCP servers run \
                         code; review the file, then run `synapse trust {}`",
                        root.display(),
                        root.display()
                    ),
                });
            }
            return config;
        }
        for path in PROJECT_CONFIG_FILES.iter().map(|f| root.join(f)) {
            config.merge_file(&path, &project_lookup, Some(root));
        }
        // Configs other tools wrote for this project (~/.claude.json's entry, .vscode/mcp.json).
        crate::mcp::sources::add_foreign(&mut config, home.as_deref(), Some(root), &project_lookup);
        crate::mcp::approval::hold_unapproved(&mut config, Some(root), &self.inner.opts.mcp_dir);
        config
    }
}

impl McpManager {
    /// The user's own servers marked `"followProject": true`, as this workspace runs them: in
    /// its root, told it as their root. They are the user's config, so they need no trust of
    /// the folder; a project server of the same name replaces one.
    fn following_servers(&self, root: &std::path::Path) -> McpConfig {
        let daemon_env = self.inner.opts.env.clone();
        let lookup = |k: &str| daemon_env(k);
        let user = McpConfig::load_layers(&self.inner.opts.mcp_dir, None, &lookup, &lookup);
        McpConfig {
            servers: user
                .servers
                .into_iter()
                .filter(|(_, s)| s.follow_project)
                .map(|(name, s)| (name, crate::mcp::project_config::in_project(s, root)))
                .collect(),
            ..McpConfig::default()
        }
    }
}

/// True when `root` is inside a folder of `$SYNAPSE_HOME/trusted_folders.json` (`mcp_dir`'s
/// parent); false when the list is missing or can't be read (fail closed).
fn project_trusted(mcp_dir: &std::path::Path, root: &std::path::Path) -> bool {
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
