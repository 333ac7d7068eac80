//! Project MCP servers follow the workspace (project root) of the most recently opened session,
//! and read its config with the environment of the client that opened it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{McpManager, lock};
use crate::mcp::config::McpConfig;

impl McpManager {
    /// Project servers follow the folder of the most recently opened session: when `dir` differs
    /// from the remembered project folder and either of them has a project config
    /// (`.mcp.json`, `mcp_servers.json`), the config is reloaded in the background; servers whose
    /// config did not change stay connected.
    pub fn follow_project(&self, dir: PathBuf) {
        self.follow_workspace(dir, None);
    }

    /// [`follow_project`](Self::follow_project) for a workspace root, remembering `env` (the
    /// opening client's environment) for `${VAR}` in the project's files.
    pub fn follow_workspace(&self, dir: PathBuf, env: Option<HashMap<String, String>>) {
        if let Some(env) = env.filter(|e| !e.is_empty()) {
            *lock(&self.inner.project_env) = Some(Arc::new(env));
        }
        let has_config = |d: &std::path::Path| {
            d.join(".mcp.json").is_file() || d.join("mcp_servers.json").is_file()
        };
        let reload = {
            let mut remembered = lock(&self.inner.project_dir);
            if remembered.as_deref() == Some(dir.as_path()) {
                return;
            }
            let reload = has_config(&dir) || remembered.as_deref().is_some_and(has_config);
            if !reload {
                *remembered = Some(dir.clone());
            }
            reload
        };
        if reload {
            self.start(Some(dir));
        }
    }

    /// The merged config: the user file with the daemon's environment, the project files of
    /// `project` with the opening client's (falling back to the daemon's for unset names).
    pub(crate) fn load_config(&self, project: Option<&Path>) -> McpConfig {
        let daemon_env = self.inner.opts.env.clone();
        let client_env = lock(&self.inner.project_env).clone();
        let project_lookup = |k: &str| {
            client_env
                .as_ref()
                .and_then(|e| e.get(k).cloned())
                .or_else(|| daemon_env(k))
        };
        // A repository's own MCP config runs code: it counts only in a folder the user trusted
        // (`synapse trust`). A trust list that can't be read counts as trusting nothing.
        let untrusted = project.filter(|root| !project_trusted(&self.inner.opts.mcp_dir, root));
        let project = project.filter(|_| untrusted.is_none());
        let mut config = McpConfig::load_layers(
            &self.inner.opts.mcp_dir,
            project,
            &|k| daemon_env(k),
            &project_lookup,
        );
        // Configs other tools wrote (~/.claude.json, .vscode/mcp.json, ~/.codex/config.toml).
        let home = daemon_env("HOME").map(std::path::PathBuf::from);
        crate::mcp::sources::add_foreign(&mut config, home.as_deref(), project, &project_lookup);
        if let Some(root) = untrusted {
            for path in crate::mcp::config::PROJECT_CONFIG_FILES
                .iter()
                .map(|f| root.join(f))
                .filter(|p| p.is_file())
            {
                config.problems.push(crate::mcp::config::ConfigProblem {
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
        }
        crate::mcp::approval::hold_unapproved(&mut config, project, &self.inner.opts.mcp_dir);
        config
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
