//! Trusted folders: a project's `.synapse/settings.json` can widen what the agent may do
//! (allow rules, a default permission mode), so it only counts in a folder its user trusted.
//! The list lives in `$SYNAPSE_HOME/trusted_folders.json` as `{"folders": ["/abs/path", …]}`;
//! trusting a folder trusts everything below it. `synapse trust` edits it; the daemon reads it
//! whenever it loads a project's rules.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::atomic::write_atomic_mode;

/// The file name inside `SYNAPSE_HOME`.
pub const TRUST_FILE: &str = "trusted_folders.json";
/// A project's own settings, relative to the project folder.
pub const PROJECT_SETTINGS: &str = ".synapse/settings.json";

/// Why the trusted-folders list could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The list file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The list file.
        path: PathBuf,
        /// What the OS answered.
        source: io::Error,
    },
    /// The list file is not JSON of the form `{"folders": ["/absolute/path", …]}`.
    #[error("{path} is not valid: {message} (expected {{\"folders\": [\"/absolute/path\", …]}})")]
    Invalid {
        /// The list file.
        path: PathBuf,
        /// What is wrong: the JSON error, a missing `folders` list, or an entry that is not an
        /// absolute path.
        message: String,
    },
    /// The list (or its folder) could not be written; an old list is left as it was.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The list file.
        path: PathBuf,
        /// What the OS answered.
        source: io::Error,
    },
    /// The folder to trust ([`add`]) was given as a relative path; it holds that path.
    #[error("{0} is not an absolute path")]
    Relative(PathBuf),
}

/// The trusted folders in `file`; a missing file is an empty list.
pub fn load(file: &Path) -> Result<Vec<PathBuf>, TrustError> {
    let text = match crate::bounded::read_text(file, None, crate::bounded::CONFIG_MAX_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(TrustError::Read {
                path: file.to_path_buf(),
                source,
            });
        }
    };
    parse(file, &text)
}

/// The trusted folders in `text`, the content of `file` (named in errors).
pub fn parse(file: &Path, text: &str) -> Result<Vec<PathBuf>, TrustError> {
    let invalid = |message: String| TrustError::Invalid {
        path: file.to_path_buf(),
        message,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let folders = value
        .get("folders")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no \"folders\" list".into()))?;
    folders
        .iter()
        .map(|f| match f.as_str() {
            Some(s) if Path::new(s).is_absolute() => Ok(normalize(Path::new(s))),
            _ => Err(invalid(format!("{f} is not an absolute path string"))),
        })
        .collect()
}

/// True when `folder` or one of its ancestors is in `trusted`.
pub fn is_trusted(trusted: &[PathBuf], folder: &Path) -> bool {
    let folder = normalize(folder);
    trusted.iter().any(|t| folder.starts_with(t))
}

/// Adds `folder` (absolute) to the list in `file`; false when it was already trusted.
pub fn add(file: &Path, folder: &Path) -> Result<bool, TrustError> {
    if !folder.is_absolute() {
        return Err(TrustError::Relative(folder.to_path_buf()));
    }
    let mut folders = load(file)?;
    let folder = normalize(folder);
    if folders.contains(&folder) {
        return Ok(false);
    }
    folders.push(folder);
    save(file, &folders)?;
    Ok(true)
}

/// Removes `folder` from the list; false when it was not there.
pub fn remove(file: &Path, folder: &Path) -> Result<bool, TrustError> {
    let mut folders = load(file)?;
    let folder = normalize(folder);
    let before = folders.len();
    folders.retain(|f| f != &folder);
    if folders.len() == before {
        return Ok(false);
    }
    save(file, &folders)?;
    Ok(true)
}

fn save(file: &Path, folders: &[PathBuf]) -> Result<(), TrustError> {
    let list: Vec<String> = folders
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({ "folders": list })).unwrap_or_default();
    text.push('\n');
    // `synapse trust` may come before the daemon ever created its home.
    if let Some(dir) = file.parent()
        && let Err(source) = std::fs::create_dir_all(dir)
    {
        return Err(TrustError::Write {
            path: file.to_path_buf(),
            source,
        });
    }
    write_atomic_mode(file, text.as_bytes(), 0o600).map_err(|source| TrustError::Write {
        path: file.to_path_buf(),
        source,
    })
}

/// The nearest folder at or above `cwd` that has a `.synapse/settings.json`, with that file.
pub fn find_project_settings(cwd: &Path) -> Option<(PathBuf, PathBuf)> {
    cwd.ancestors().find_map(|dir| {
        let file = dir.join(PROJECT_SETTINGS);
        file.is_file().then(|| (dir.to_path_buf(), file))
    })
}

pub use crate::paths::normalize;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn trust_covers_subfolders_and_survives_a_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(TRUST_FILE);
        assert!(load(&file).unwrap().is_empty());
        assert!(add(&file, Path::new("/work/proj/../proj")).unwrap());
        assert!(!add(&file, Path::new("/work/proj")).unwrap());
        let list = load(&file).unwrap();
        assert!(is_trusted(&list, Path::new("/work/proj/sub/dir")));
        assert!(!is_trusted(&list, Path::new("/work/projX")));
        assert!(!is_trusted(&list, Path::new("/work")));
        assert!(remove(&file, Path::new("/work/proj")).unwrap());
        assert!(load(&file).unwrap().is_empty());
        assert!(matches!(
            add(&file, Path::new("rel")),
            Err(TrustError::Relative(_))
        ));
    }

    #[test]
    fn a_broken_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(TRUST_FILE);
        std::fs::write(&file, r#"{"folders": ["relative"]}"#).unwrap();
        let e = load(&file).unwrap_err().to_string();
        assert!(e.contains(TRUST_FILE) && e.contains("absolute"), "{e}");
    }
}

#[cfg(test)]
#[path = "trust_props.rs"]
mod props;
