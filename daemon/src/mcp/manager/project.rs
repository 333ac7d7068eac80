//! Project MCP servers follow the folder of the most recently opened session.

use std::path::PathBuf;

use super::{McpManager, lock};

impl McpManager {
    /// Project servers follow the folder of the most recently opened session: when `dir` differs
    /// from the remembered project folder and either of them has a project config
    /// (`.mcp.json`, `mcp_servers.json`), the config is reloaded in the background; servers whose
    /// config did not change stay connected.
    pub fn follow_project(&self, dir: PathBuf) {
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
}
