//! Finding a session's project root: the nearest folder at or above its cwd that holds one of
//! the project markers, else the cwd itself. The user's home is never a project root by itself
//! (`~/.claude` and `~/.agents` hold user-level state), so a session under `~` without a marker
//! of its own stays in its cwd.

use std::path::{Path, PathBuf};

/// Entries that make a folder a project root, in the order they are looked for.
pub const PROJECT_MARKERS: [&str; 5] = [".git", ".synapse", ".claude", ".agents", ".mcp.json"];

/// The project root for `cwd` (an absolute folder); `home` is the user's home, which only counts
/// as a root when it is `cwd` itself.
pub fn project_root(cwd: &Path, home: Option<&Path>) -> PathBuf {
    for dir in cwd.ancestors() {
        if Some(dir) == home && dir != cwd {
            break;
        }
        if PROJECT_MARKERS.iter().any(|m| dir.join(m).exists()) {
            return dir.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_marker_wins_and_home_is_not_a_root_for_subfolders() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let proj = home.join("proj");
        let sub = proj.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        assert_eq!(project_root(&sub, Some(&home)), proj);
        let loose = home.join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(project_root(&loose, Some(&home)), loose);
        assert_eq!(project_root(&home, Some(&home)), home);
        std::fs::write(sub.join(".mcp.json"), "{}").unwrap();
        assert_eq!(project_root(&sub, Some(&home)), sub);
    }
}
