//! Finding a session's project root: the nearest folder at or above its cwd that holds one of
//! the project markers, else the cwd itself.
//!
//! A marker is what it claims to be: `.synapse`, `.claude` and `.agents` count only as folders,
//! `.git` as a folder or a file (a worktree's or submodule's `gitdir:` pointer), `.mcp.json` as
//! a regular file; a stray file named `.synapse` (or a FIFO named `.mcp.json`) makes nothing a
//! project. Links are followed, as the folder a link names is what a session would read.
//!
//! Neither `/` nor the user's home becomes a project root by inheritance: a folder below them
//! without a marker of its own stays its own root, so one stray marker there never merges every
//! session into one workspace (and `~/.claude`, `~/.agents` hold user-level state anyway). Each
//! is still the root of a session started in it.

use std::path::{Path, PathBuf};

/// Entries that make a folder a project root, in the order they are looked for.
pub const PROJECT_MARKERS: [&str; 5] = [".git", ".synapse", ".claude", ".agents", ".mcp.json"];

/// What an entry must be to count as the marker it is named after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkerKind {
    Folder,
    FolderOrFile,
    File,
}

fn kind_of(marker: &str) -> MarkerKind {
    match marker {
        ".git" => MarkerKind::FolderOrFile,
        ".mcp.json" => MarkerKind::File,
        _ => MarkerKind::Folder,
    }
}

/// Whether `dir` holds `marker` as the kind of entry it claims to be.
fn holds_marker(dir: &Path, marker: &str) -> bool {
    let Ok(meta) = std::fs::metadata(dir.join(marker)) else {
        return false;
    };
    match kind_of(marker) {
        MarkerKind::Folder => meta.is_dir(),
        MarkerKind::FolderOrFile => meta.is_dir() || meta.is_file(),
        MarkerKind::File => meta.is_file(),
    }
}

/// Whether `dir` is marked as a project root by an entry of its own.
pub fn is_marked(dir: &Path) -> bool {
    PROJECT_MARKERS.iter().any(|m| holds_marker(dir, m))
}

/// The project root for `cwd` (an absolute folder); `home` is the user's home. `/` and `home`
/// only count as a root when they are `cwd` itself (and hold a marker).
pub fn project_root(cwd: &Path, home: Option<&Path>) -> PathBuf {
    for dir in cwd.ancestors() {
        let inherited = dir != cwd;
        if inherited && (Some(dir) == home || dir.parent().is_none()) {
            break;
        }
        if is_marked(dir) {
            return dir.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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

    #[test]
    fn a_plain_file_named_like_a_folder_marker_marks_nothing() {
        let t = tempfile::tempdir().unwrap();
        let parent = t.path().join("parent");
        let child = parent.join("child");
        std::fs::create_dir_all(&child).unwrap();
        for name in [".synapse", ".claude", ".agents"] {
            std::fs::write(parent.join(name), "stray").unwrap();
            assert!(!is_marked(&parent), "{name} as a file");
            assert_eq!(project_root(&child, None), child, "{name} as a file");
            std::fs::remove_file(parent.join(name)).unwrap();
            std::fs::create_dir(parent.join(name)).unwrap();
            assert_eq!(project_root(&child, None), parent, "{name} as a folder");
            std::fs::remove_dir(parent.join(name)).unwrap();
        }
    }

    #[test]
    fn git_counts_as_a_folder_or_a_worktree_file_and_mcp_json_only_as_a_file() {
        let t = tempfile::tempdir().unwrap();
        let worktree = t.path().join("wt");
        let sub = worktree.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            worktree.join(".git"),
            "gitdir: /elsewhere/.git/worktrees/wt\n",
        )
        .unwrap();
        assert_eq!(project_root(&sub, None), worktree);

        let other = t.path().join("other");
        let inner = other.join("inner");
        std::fs::create_dir_all(other.join(".mcp.json")).unwrap();
        std::fs::create_dir_all(&inner).unwrap();
        assert_eq!(project_root(&inner, None), inner, ".mcp.json as a folder");
        std::fs::remove_dir(other.join(".mcp.json")).unwrap();
        nix_fifo(&other.join(".mcp.json"));
        assert_eq!(project_root(&inner, None), inner, ".mcp.json as a FIFO");
        std::fs::remove_file(other.join(".mcp.json")).unwrap();
        std::fs::write(other.join(".mcp.json"), "{}").unwrap();
        assert_eq!(project_root(&inner, None), other);
    }

    fn nix_fifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn the_filesystem_root_is_never_inherited() {
        // `/` is an ancestor of every folder: whatever it holds, a folder below it without a
        // marker of its own stays its own root (the walk stops before `/`).
        let t = tempfile::tempdir().unwrap();
        let loose = t.path().join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        assert_ne!(project_root(&loose, None), Path::new("/"));
        // A session in `/` itself is rooted there.
        assert_eq!(project_root(Path::new("/"), None), Path::new("/"));
    }
}
