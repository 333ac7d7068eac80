//! Skill versions: a byte-exact copy of a user skill's folder, taken before an automatic change
//! (and before a rollback, so a rollback can be undone). Stored as
//! `$SYNAPSE_HOME/skill-versions/<name>/<n>/…` with `<n>.reason` beside it; the last
//! [`VERSIONS_KEPT`] are kept. Rollback replaces the folder's files with the copy's.

use std::path::{Path, PathBuf};

/// Versions kept per skill.
pub const VERSIONS_KEPT: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error("no skill folder {0}")]
    NoSkill(PathBuf),
    #[error("skill {name:?} has no version {version} (see `synapse skill versions {name}`)")]
    NoVersion { name: String, version: u32 },
    #[error("skill {0:?} has no saved versions")]
    NoVersions(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> VersionError + '_ {
    move |source| VersionError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One saved version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub number: u32,
    /// Seconds since the epoch when it was saved.
    pub saved_at: u64,
    pub reason: String,
}

/// The versions of every skill under one folder.
#[derive(Debug, Clone)]
pub struct Versions {
    root: PathBuf,
}

/// Prefix of the staging folders [`Versions::staging`] makes beside the versions.
const STAGING_PREFIX: &str = ".staging-";

impl Versions {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// A fresh folder beside the versions (same file system) for copies taken before a run;
    /// removed when dropped.
    pub fn staging(&self) -> Result<tempfile::TempDir, VersionError> {
        std::fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .tempdir_in(&self.root)
            .map_err(io(&self.root))
    }

    /// Removes staging folders a crashed daemon left behind (at start, before any run).
    pub fn remove_stale_staging(&self) {
        for entry in std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(STAGING_PREFIX)
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// Saved versions of `name`, oldest first.
    pub fn list(&self, name: &str) -> Vec<Version> {
        let dir = self.root.join(name);
        let mut out: Vec<Version> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .map(|number| {
                let meta = std::fs::read_to_string(dir.join(format!("{number}.reason")))
                    .unwrap_or_default();
                let (at, reason) = meta.split_once('\t').unwrap_or(("0", meta.as_str()));
                Version {
                    number,
                    saved_at: at.trim().parse().unwrap_or(0),
                    reason: reason.trim().to_string(),
                }
            })
            .collect();
        out.sort_by_key(|v| v.number);
        out
    }

    /// Copies `skill_dir` as the next version of `name`; drops versions beyond the last 20.
    pub fn snapshot(
        &self,
        name: &str,
        skill_dir: &Path,
        reason: &str,
    ) -> Result<u32, VersionError> {
        if !skill_dir.is_dir() {
            return Err(VersionError::NoSkill(skill_dir.to_path_buf()));
        }
        let list = self.list(name);
        let number = list.last().map_or(1, |v| v.number + 1);
        let dir = self.root.join(name);
        let target = dir.join(number.to_string());
        copy_tree(skill_dir, &target)?;
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let reason_file = dir.join(format!("{number}.reason"));
        std::fs::write(&reason_file, format!("{secs}\t{reason}\n")).map_err(io(&reason_file))?;
        let all = self.list(name);
        for old in all.iter().take(all.len().saturating_sub(VERSIONS_KEPT)) {
            let _ = std::fs::remove_dir_all(dir.join(old.number.to_string()));
            let _ = std::fs::remove_file(dir.join(format!("{}.reason", old.number)));
        }
        Ok(number)
    }

    /// Restores `version` (default: the newest) into `skill_dir`, after saving the current
    /// state as a version of its own. Returns the version restored.
    pub fn rollback(
        &self,
        name: &str,
        skill_dir: &Path,
        version: Option<u32>,
    ) -> Result<u32, VersionError> {
        let list = self.list(name);
        let wanted = match version {
            Some(v) => list
                .iter()
                .find(|x| x.number == v)
                .ok_or(VersionError::NoVersion {
                    name: name.to_string(),
                    version: v,
                })?,
            None => list
                .last()
                .ok_or_else(|| VersionError::NoVersions(name.to_string()))?,
        }
        .number;
        let source = self.root.join(name).join(wanted.to_string());
        if skill_dir.is_dir() {
            self.snapshot(
                name,
                skill_dir,
                &format!("before rollback to version {wanted}"),
            )?;
            std::fs::remove_dir_all(skill_dir).map_err(io(skill_dir))?;
        }
        copy_tree(&source, skill_dir)?;
        Ok(wanted)
    }
}

/// Copies files and folders (not symlinks), keeping Unix permissions (scripts stay executable).
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), VersionError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))?.flatten() {
        let path = entry.path();
        let dest = to.join(entry.file_name());
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_dir() {
            copy_tree(&path, &dest)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &dest).map_err(io(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn rollback_restores_bytes_and_keeps_twenty() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("skills/a");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(skill.join("SKILL.md"), b"v1\r\n\x00bytes").unwrap();
        std::fs::write(skill.join("scripts/x.sh"), b"echo 1").unwrap();
        let versions = Versions::new(tmp.path().join("versions"));
        assert_eq!(versions.snapshot("a", &skill, "test").unwrap(), 1);
        std::fs::write(skill.join("SKILL.md"), b"v2").unwrap();
        std::fs::write(skill.join("new.md"), b"new").unwrap();
        assert_eq!(versions.rollback("a", &skill, Some(1)).unwrap(), 1);
        assert_eq!(
            std::fs::read(skill.join("SKILL.md")).unwrap(),
            b"v1\r\n\x00bytes"
        );
        assert!(!skill.join("new.md").exists());
        assert_eq!(versions.list("a").len(), 2);
        for _ in 0..25 {
            versions.snapshot("a", &skill, "again").unwrap();
        }
        let list = versions.list("a");
        assert_eq!(list.len(), VERSIONS_KEPT);
        assert_eq!(list.last().unwrap().number, 27);
    }
}
