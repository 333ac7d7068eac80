//! The project layer of the MCP config: a workspace's `.mcp.json` / `mcp_servers.json` read as
//! the project expects. `${VAR}` expands from the environment of the client that opened the
//! workspace, a server runs in the project root unless it names its own `cwd`, and a relative
//! command path (`./srv.py`) resolves against that folder, not the daemon's.

use std::path::Path;

use super::config::{McpConfig, PROJECT_CONFIG_FILES, ServerConfig, Transport, config_files};

impl McpConfig {
    /// Reads the user file with `user_lookup` and the project files of `project` with
    /// `project_lookup` (the environment of the client that opened the workspace). A project
    /// server runs in the project root unless it names its own `cwd`, and a relative command
    /// path (`./srv.py`) resolves there, as the project's own tools expect.
    pub fn load_layers(
        mcp_dir: &Path,
        project: Option<&Path>,
        user_lookup: &dyn Fn(&str) -> Option<String>,
        project_lookup: &dyn Fn(&str) -> Option<String>,
    ) -> McpConfig {
        let mut config = McpConfig::load(&config_files(mcp_dir, None), user_lookup);
        let Some(project) = project else {
            return config;
        };
        for path in PROJECT_CONFIG_FILES.iter().map(|f| project.join(f)) {
            config.merge_file(&path, project_lookup, Some(project));
        }
        config
    }
}

/// A project server starts in the project root, and a relative command path resolves there.
pub(crate) fn in_project(mut server: ServerConfig, root: &Path) -> ServerConfig {
    if let Transport::Stdio { command, cwd, .. } = &mut server.transport {
        let dir = cwd.get_or_insert_with(|| root.to_path_buf()).clone();
        let program = Path::new(command.as_str());
        if program.is_relative() && program.components().count() > 1 {
            *command = dir.join(program).display().to_string();
        }
    }
    server
}
