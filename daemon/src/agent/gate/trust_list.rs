//! The trusted folders (`$SYNAPSE_HOME/trusted_folders.json`), changed only through the daemon
//! (`Daemon.Trust`, used by `synapse trust`): the service refuses a change from a sandboxed
//! client before calling [`change`], so an agent cannot trust the repository it works in.
//! Trusting a folder also pins its `.synapse/settings.json` (and Claude Code's
//! `.claude/settings.json` and `.claude/settings.local.json`, for their hooks) as they read now,
//! and every custom command and agent file of its `.synapse/` and `.claude/`
//! ([`crate::agent::custom::files::pin_project`]).

use std::path::{Path, PathBuf};

use super::settings_pin;
use synapse_shared::trust::{self, TrustError};

#[derive(Debug, thiserror::Error)]
pub enum TrustListError {
    #[error("{0} is not a folder; trust the project's folder")]
    NotAFolder(PathBuf),
    #[error(transparent)]
    List(#[from] TrustError),
    #[error(transparent)]
    Pin(#[from] super::settings_pin::PinError),
}

/// What `synapse trust` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustChange {
    Add(PathBuf),
    Remove(PathBuf),
    List,
}

/// Applies `change` to the list in `file`: whether it changed, and the folders afterwards.
pub fn change(file: &Path, change: TrustChange) -> Result<(bool, Vec<PathBuf>), TrustListError> {
    let changed = match change {
        TrustChange::List => false,
        TrustChange::Add(folder) => {
            if !folder.is_dir() {
                return Err(TrustListError::NotAFolder(folder));
            }
            let added = trust::add(file, &folder)?;
            // Trusting (again) is the user's review of the project's rules as they read now.
            let home = file.parent().unwrap_or(Path::new("/"));
            for name in settings_pin::PINNED_PROJECT_FILES {
                settings_pin::pin(&settings_pin::pin_file(home), &folder.join(name))?;
            }
            // And its custom commands and agents (`.claude/commands/`, `.synapse/agents/`, …).
            crate::agent::custom::files::pin_project(home, &folder)?;
            added
        }
        TrustChange::Remove(folder) => trust::remove(file, &folder)?,
    };
    Ok((changed, trust::load(file)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_list_remove() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("trusted_folders.json");
        let project = tempfile::tempdir().unwrap();
        let dir = project.path().to_path_buf();
        assert!(change(&file, TrustChange::Add(dir.clone())).unwrap().0);
        assert!(!change(&file, TrustChange::Add(dir.clone())).unwrap().0);
        assert_eq!(change(&file, TrustChange::List).unwrap().1.len(), 1);
        assert!(matches!(
            change(&file, TrustChange::Add(dir.join("missing"))),
            Err(TrustListError::NotAFolder(_))
        ));
        assert!(change(&file, TrustChange::Remove(dir)).unwrap().0);
        assert!(change(&file, TrustChange::List).unwrap().1.is_empty());
    }
}
