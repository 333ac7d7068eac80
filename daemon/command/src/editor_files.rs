//! The editor's files ([`EditorFiles`]): when the session's front end is an editor that offered
//! its files (ACP's `fs/read_text_file` and `fs/write_text_file`), `read`, `write` and `edit` of
//! a file inside the session's folder use it as their storage, so they see the user's unsaved
//! buffer and the editor records the change. The gate has decided before any of them asks; the
//! editor is only where the bytes live, and what it answers is content, never authority.
//!
//! [`EditorFilesHandle::serves`] is the one check of which paths may go to the editor (inside
//! the session's folder, also after symlinks resolve); every other path is read and written on
//! disk as always. An editor that left or did not answer is [`EditorError::Gone`]: the command
//! falls back to disk and says so ([`disk_fallback_notice`]), so nothing is lost.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

/// How long the editor has to answer one file request before the command falls back to disk.
pub const EDITOR_ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the editor did not give a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditorError {
    /// The editor answered with an error (its message): the command fails with it.
    #[error("{0}")]
    Refused(String),
    /// The editor left or did not answer in time (why): the command uses the disk instead.
    #[error("{0}")]
    Gone(String),
}

/// The files of the editor attached to the session.
pub trait EditorFiles: Send + Sync {
    /// The file's text as the editor has it (its unsaved buffer, else the file).
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>>;

    /// Replaces the file's text through the editor.
    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>>;
}

/// The editor of a session, with the folder it serves. Cheap to clone.
#[derive(Clone)]
pub struct EditorFilesHandle {
    files: Arc<dyn EditorFiles>,
    /// The session's folder, as given and with its symlinks resolved.
    root: PathBuf,
    real_root: PathBuf,
}

impl std::fmt::Debug for EditorFilesHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorFilesHandle")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl EditorFilesHandle {
    /// The editor `files`, serving the files inside `root` (the session's folder).
    pub fn new(files: Arc<dyn EditorFiles>, root: &Path) -> Self {
        Self {
            files,
            root: normalize(root),
            real_root: std::fs::canonicalize(root).unwrap_or_else(|_| normalize(root)),
        }
    }

    /// The editor, for `abs` when it may go there: an absolute path inside the session's folder,
    /// also once its symlinks resolve. `None` for anything else (it stays on disk).
    pub fn serves(&self, abs: &Path) -> Option<&dyn EditorFiles> {
        if !abs.is_absolute() {
            return None;
        }
        let plain = normalize(abs);
        if plain == self.root || !plain.starts_with(&self.root) {
            return None;
        }
        // The part of the path that exists, resolved: a link inside the folder may point out.
        let mut existing = plain.as_path();
        let real = loop {
            match std::fs::canonicalize(existing) {
                Ok(real) => break real,
                Err(_) => match existing.parent() {
                    Some(parent) => existing = parent,
                    None => return None,
                },
            }
        };
        real.starts_with(&self.real_root)
            .then_some(self.files.as_ref())
    }
}

/// `path` with `.` dropped and `..` taken back (no file system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The line a command adds when the editor was gone and the disk was used instead.
pub fn disk_fallback_notice(did: &str, why: &str) -> String {
    format!("[the editor did not answer ({why}); {did} the file on disk instead]")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nobody;

    impl EditorFiles for Nobody {
        fn read<'a>(&'a self, _: &'a Path) -> BoxFuture<'a, Result<String, EditorError>> {
            Box::pin(async { Err(EditorError::Gone("gone".into())) })
        }
        fn write<'a>(&'a self, _: &'a Path, _: &'a str) -> BoxFuture<'a, Result<(), EditorError>> {
            Box::pin(async { Err(EditorError::Gone("gone".into())) })
        }
    }

    #[test]
    fn only_paths_inside_the_folder_go_to_the_editor() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let outside = dir.path().join("elsewhere");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let editor = EditorFilesHandle::new(Arc::new(Nobody), &root);
        assert!(editor.serves(&root.join("src/main.rs")).is_some());
        assert!(editor.serves(&root.join("new/deep/file.txt")).is_some());
        assert!(editor.serves(&root.join("src/../notes.txt")).is_some());
        assert!(editor.serves(&root).is_none());
        assert!(editor.serves(&root.join("../elsewhere/x")).is_none());
        assert!(editor.serves(&outside.join("x")).is_none());
        assert!(
            editor.serves(&root.join("link/x")).is_none(),
            "a link out of the folder"
        );
        assert!(editor.serves(Path::new("relative.txt")).is_none());
    }
}
