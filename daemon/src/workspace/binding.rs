//! A session's binding to its workspace: the project root it is bound to, the folder of the
//! project's own commands, the hold that keeps the workspace up while the session lives, the
//! instruction files it was given, and the session's own MCP commands ([`SessionTools`]). Made
//! by [`super::registry::Workspaces::bind`]; the shell puts the bin folders first on PATH and
//! sub-agents inherit the binding.

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
    /// The session's own MCP commands (`--mcp-config`), when it has any.
    pub own: Option<SessionTools>,
}

/// A session's own MCP commands: their folder, first on its shells' PATH (before the
/// workspace's), and the session's id, named in the shells as `$SYNAPSE_SESSION` so a wrapper
/// reaches the session's servers. The servers stop when the last copy of the hold goes.
#[derive(Clone)]
pub struct SessionTools {
    pub session: String,
    pub bin_dir: PathBuf,
    pub hold: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for WorkspaceBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceBinding")
            .field("root", &self.root)
            .field("bin_dir", &self.bin_dir)
            .field("own", &self.own.as_ref().map(|o| &o.bin_dir))
            .finish_non_exhaustive()
    }
}

impl PartialEq for WorkspaceBinding {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
            && self.bin_dir == other.bin_dir
            && self.own_words() == other.own_words()
    }
}

impl WorkspaceBinding {
    /// The session id and folder of the session's own commands, if any (what tells two
    /// shells' PATHs apart).
    pub fn own_words(&self) -> Option<(&str, &std::path::Path)> {
        self.own
            .as_ref()
            .map(|o| (o.session.as_str(), o.bin_dir.as_path()))
    }
}
