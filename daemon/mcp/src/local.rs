//! The `local` scope (`synapse mcp add --scope local`), as Claude Code's: servers of one project
//! for this user only. They are kept in `$SYNAPSE_HOME/mcp/local/<name>-<hash>.json`, one file
//! per project root (never in the project, so a clone or a session never sees or writes them),
//! and need no trust or approval: the user wrote them through the CLI. The project's manager
//! reads them above the project's own files (a local server wins over a project one of the same
//! name), with the project's `${VAR}` environment.

use std::path::{Path, PathBuf};

/// The folder below `$SYNAPSE_HOME/mcp/`.
pub const LOCAL_DIR: &str = "local";

/// `$SYNAPSE_HOME/mcp/local`.
pub fn dir(mcp_dir: &Path) -> PathBuf {
    mcp_dir.join(LOCAL_DIR)
}

/// The local-scope file of the project at `root`.
pub fn file(mcp_dir: &Path, root: &Path) -> PathBuf {
    dir(mcp_dir).join(format!(
        "{}.json",
        synapse_command::workspaces::workspace_id(root)
    ))
}

/// Creates the project's file (0600, naming its project for a reader) when it is missing, so
/// [`super::edit::add`] has a file that says whose servers it holds.
pub fn ensure_file(mcp_dir: &Path, root: &Path) -> std::io::Result<PathBuf> {
    let path = file(mcp_dir, root);
    if path.exists() {
        return Ok(path);
    }
    std::fs::create_dir_all(dir(mcp_dir))?;
    let mut text = serde_json::to_string_pretty(
        &serde_json::json!({"project": root.display().to_string(), "mcpServers": {}}),
    )
    .unwrap_or_default();
    text.push('\n');
    synapse_shared::atomic::write_atomic_mode(&path, text.as_bytes(), 0o600)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_project_has_its_own_file_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let a = ensure_file(t.path(), Path::new("/work/a")).unwrap();
        let b = file(t.path(), Path::new("/work/b"));
        assert_ne!(a, b);
        assert!(a.starts_with(dir(t.path())));
        let text = std::fs::read_to_string(&a).unwrap();
        assert!(text.contains("\"project\": \"/work/a\""), "{text}");
    }
}
