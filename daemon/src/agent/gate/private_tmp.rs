//! A private temporary folder per chat session: the session shell's `TMPDIR` and the only
//! temporary folder its sandbox may write, instead of all of the daemon's temp dir (where a
//! `SYNAPSE_HOME` under `/tmp` — every test and CI run — would otherwise be writable from the
//! sandbox). It lives in `<temp>/synapse-<uid>/d-<daemon>/session-XXXX` (all 0700, the parents
//! checked to be real folders of ours, writable by nobody else; `d-<daemon>` is this daemon's
//! own, [`crate::lifecycle::debris::session_tmp_base`]) and is removed when the session's gate
//! is dropped, i.e. when the session ends — or, after a crash, when the daemon starts again.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a gate's temporary files go.
#[derive(Debug, Clone, Default)]
pub enum SessionTmp {
    /// The daemon's temp dir, shared (gates without a session of their own: `synapse exec`).
    #[default]
    Shared,
    Private(Arc<tempfile::TempDir>),
    /// A private folder could not be made: no temporary folder is writable (fail closed).
    Unavailable,
}

impl SessionTmp {
    /// A fresh private folder below `temp`; [`SessionTmp::Unavailable`] (logged) when the
    /// parent is not safe or cannot be made.
    pub fn private(temp: &Path) -> SessionTmp {
        match make(temp) {
            Ok(dir) => SessionTmp::Private(Arc::new(dir)),
            Err(why) => {
                tracing::warn!(
                    "no private temporary folder for the session ({why}); its shell gets none"
                );
                SessionTmp::Unavailable
            }
        }
    }

    /// The session's own folder, when it has one (never the daemon's shared temp dir).
    pub fn private_path(&self) -> Option<PathBuf> {
        match self {
            SessionTmp::Private(dir) => Some(dir.path().to_path_buf()),
            SessionTmp::Shared | SessionTmp::Unavailable => None,
        }
    }

    /// The folder the session may use, given the daemon's shared temp dir.
    pub fn path(&self, shared: &Path) -> Option<PathBuf> {
        match self {
            SessionTmp::Shared => Some(shared.to_path_buf()),
            SessionTmp::Private(dir) => Some(dir.path().to_path_buf()),
            SessionTmp::Unavailable => None,
        }
    }
}

fn make(temp: &Path) -> Result<tempfile::TempDir, String> {
    let base = crate::lifecycle::debris::session_tmp_base(temp);
    for folder in base.parent().into_iter().chain([base.as_path()]) {
        private_folder(folder)?;
    }
    let dir = tempfile::Builder::new()
        .prefix("session-")
        .tempdir_in(&base)
        .map_err(|e| format!("cannot create a folder in {}: {e}", base.display()))?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot restrict {}: {e}", dir.path().display()))?;
    Ok(dir)
}

/// Makes `folder` (0700) unless it exists, then checks it is a real folder of ours that nobody
/// else can write.
fn private_folder(folder: &Path) -> Result<(), String> {
    let uid = nix::unistd::getuid().as_raw();
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", folder.display())),
    }
    let meta = std::fs::symlink_metadata(folder)
        .map_err(|e| format!("cannot inspect {}: {e}", folder.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a folder of ours writable only by us",
            folder.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_is_ours_alone_and_goes_with_its_owner() {
        let temp = tempfile::tempdir().unwrap();
        let tmp = SessionTmp::private(temp.path());
        let path = tmp.path(temp.path()).unwrap();
        assert!(path.starts_with(temp.path()) && path.is_dir());
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o077, 0);
        drop(tmp);
        assert!(!path.exists(), "removed when the session ends");
    }

    #[test]
    fn a_parent_writable_by_others_gives_no_folder() {
        let temp = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let base = temp.path().join(format!("synapse-{uid}"));
        std::fs::create_dir(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            SessionTmp::private(temp.path()),
            SessionTmp::Unavailable
        ));
    }
}
