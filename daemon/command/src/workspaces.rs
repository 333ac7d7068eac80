//! Workspaces as an extension sees them. The daemon serves many projects at once; a project is
//! *up* while a session works in it (and for an idle period after), and has a folder
//! `$SYNAPSE_HOME/workspaces/<id>` whose `bin/` only its sessions' shells have on PATH. The
//! daemon's `workspace/` room keeps them ([`WorkspaceHost`]); an extension that keeps something
//! per project (the MCP hub: the project's servers; the skill store: the project's skill
//! commands) subscribes a [`WorkspaceListener`] and never needs to know the others.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A workspace's own folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceDirs {
    /// `$SYNAPSE_HOME/workspaces/<id>`: removed when the workspace goes down.
    pub state_dir: PathBuf,
    /// `<state_dir>/bin`: first on PATH in the workspace's shells.
    pub bin_dir: PathBuf,
}

/// Told when a workspace comes up (its bin folder is on its sessions' PATH from now on) and when
/// it went down and its folder was removed. Called on the caller's thread: keep it short, and
/// spawn what has to wait.
pub trait WorkspaceListener: Send + Sync {
    /// Workspace `root` came up with folders `dirs`.
    fn workspace_up(&self, root: &Path, dirs: &WorkspaceDirs);
    /// Workspace `root` went down (idle); its folder is gone.
    fn workspace_down(&self, root: &Path);
}

/// The daemon's workspaces, for an extension.
pub trait WorkspaceHost: Send + Sync {
    /// Brings workspace `root` up (telling the listeners when it was down), marks it used now,
    /// and gives its folders.
    fn open(&self, root: &Path) -> WorkspaceDirs;

    /// Adds a listener: it hears of every workspace that comes up or goes down from now on.
    fn subscribe(&self, listener: Arc<dyn WorkspaceListener>);
}

/// A short stable name for a root: its last component and a hash of the whole path, usable as a
/// folder name (`$SYNAPSE_HOME/workspaces/<id>`).
pub fn workspace_id(root: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    // FNV-1a: stable across builds, so the folder name survives a daemon upgrade.
    let hash = root
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    format!("{name}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_for_same_named_folders() {
        let a = workspace_id(Path::new("/x/app"));
        let b = workspace_id(Path::new("/y/app"));
        assert!(a.starts_with("app-") && b.starts_with("app-"));
        assert_ne!(a, b);
    }
}
