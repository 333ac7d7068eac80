//! A session's binding to its workspace: the project root it is bound to, the folder of the
//! project's own commands, the hold that keeps the workspace up while the session lives, and the
//! instruction files it was given. Made by [`super::registry::Workspaces::bind`]; the shell puts
//! the bin folder first on PATH and sub-agents inherit the binding.

use std::path::PathBuf;

/// The workspace (project root) a session is bound to: the folder of its project's own commands
/// (`mcp:*` of the project's servers), first on PATH, and a hold that keeps the workspace's
/// servers up while the session lives.
#[derive(Clone)]
pub struct WorkspaceBinding {
    pub root: PathBuf,
    pub bin_dir: PathBuf,
    /// Dropped with the last copy: the workspace may then stop when idle.
    pub hold: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    /// The instruction files the session was given, and the nested ones still to give
    /// (text for the model only; they grant nothing).
    pub instructions: std::sync::Arc<super::instructions::SessionInstructions>,
}

impl std::fmt::Debug for WorkspaceBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceBinding")
            .field("root", &self.root)
            .field("bin_dir", &self.bin_dir)
            .finish_non_exhaustive()
    }
}

impl PartialEq for WorkspaceBinding {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root && self.bin_dir == other.bin_dir
    }
}
